/** Splits `argv` into positional words and `--name value` / `--flag` options (`--name=value` too). */
export function splitArgs(argv: readonly string[]): { words: string[]; options: Map<string, string | true> } {
  const words: string[] = [];
  const options = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      words.push(...argv.slice(i + 1));
      break;
    }
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      if (eq > 0) {
        options.set(a.slice(2, eq), a.slice(eq + 1));
      } else {
        const next = argv[i + 1];
        if (next !== undefined && !next.startsWith('--')) {
          options.set(a.slice(2), next);
          i++;
        } else {
          options.set(a.slice(2), true);
        }
      }
    } else {
      words.push(a);
    }
  }
  return { words, options };
}

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}
