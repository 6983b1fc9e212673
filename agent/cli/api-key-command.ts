import { generateToken } from '../security/token-hash.js';
import { UsageError } from './args.js';

/** `svc control-center api-key generate [--export]`: a fresh 256-bit key, printed once, stored nowhere. */
export function apiKeyGenerateCommand(options: Map<string, string | true>): void {
  for (const k of options.keys()) if (k !== 'export') throw new UsageError(`unknown option --${k} for api-key generate`);
  const token = generateToken();
  if (options.has('export')) {
    process.stdout.write(`export SVC_API_KEY=${token}\n`);
    return;
  }
  process.stdout.write(
    [
      token,
      '',
      'This is a new administrator key. It is shown only now and stored nowhere.',
      'Give it to the agent as an environment variable:',
      `  export SVC_API_KEY=${token}`,
      'or create role-scoped keys through POST /v1/admin/api-keys once the agent runs.',
      '',
    ].join('\n'),
  );
}
