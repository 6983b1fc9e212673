import { ApiError } from '../core/errors.js';
import { cliWords } from '../core/operation.js';
import { SPECS } from '../../api/index.js';
import { ConfigError } from '../project/resolve-config.js';
import { ProjectError } from '../project/project-context.js';
import { SVC_VERSION } from '../runtime/versions.js';
import { TEXT_FORMS } from './text-forms/index.js';
import { loadSettings, SettingsError } from '../settings/settings.js';
import { splitArgs, UsageError } from './args.js';
import { buildInput, findOperation, runLocal, runRemote } from './operation-command.js';
import { apiKeyGenerateCommand } from './api-key-command.js';
import { serveCommand } from './serve-command.js';
import { simDeviceCommand } from './sim-device-command.js';
import { programCommandFor } from '../programs/handlers.js';
import { findSectionCommand, runSectionCommand, sectionUsage } from './program-sections.js';

/** Exit codes: 0 success, 1 the operation was refused or failed, 2 usage, configuration or parse error. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

function usage(): string {
  const lines = SPECS.filter((op) => cliWords(op)).map((op) => {
    const params = op.path.match(/\{[^}]+\}/g)?.map((p) => `<${p.slice(1, -1)}>`).join(' ') ?? '';
    return `  svc ${[...cliWords(op)!, params].filter(Boolean).join(' ').padEnd(34)} ${op.method} ${op.path}`;
  });
  return [
    `svc ${SVC_VERSION}: the svc control center agent`,
    '',
    'Usage:',
    '  svc serve [--config svc.toml] [--program file.sd] [--bind host:port] [--grpc-bind host:port] [--relay URL --enroll-token TOKEN] [--once]',
    '                                                         (alias: svc control-center serve; --once: start, print the address, stop)',
    '  svc relay serve [--bind host:port] [--mqtt-bind host:port] [--mqtt-url URL] [--state-dir DIR]   the fleet relay (docs/relay.md)',
    '  svc relay enroll --tenant T --agent A [--ttl 24h] [--state-dir DIR]',
    '  svc sim-device (--serial PATH | --slcan PATH | --mqtt URL) --id ID [--type T] [--firmware V] [--rate HZ] [--fault F]',
    '  svc control-center api-key generate [--export]',
    '  svc check FILE.sd... [--json] [--readiness-json [--config svc.toml]]   parse, type check and static checks',
    '  svc readiness|assure|diagnose|heal|verify|sim|replay|trust|explain FILE [--json] [--config svc.toml] [--target HW]',
    '  svc readiness FILE.sd [--all-targets] [--runtime] [--inject-health-faults] [--strict] [--policy FILE] [--baseline DIR] [--simulate FAULTS]',
    '                        [--record] [--json | --markdown | --html | --agent-json]',
    '  svc verify FILE.sd [--target HW | --all-targets] [--simulate FAULTS] [--strict-certify]     (alias: svc compatibility)',
    '      (--simulate LidarFailure,NetworkOutage,…: simulate_compatibility faults applied to the profile before checking)',
    '  svc verify FILE.sd --capabilities [--traceability] [--health] [--minimum-capabilities]',
    '  svc sim FILE.sd [--record] [--trace-out PATH] [--decision-trace] [--inject-health-faults] [--inject-failure NAME]',
    '                  [--trace-scheduler] [--wall-clock] [--replay] [--json | --metrics-json]',
    '      (--wall-clock: each loop interval passes for real; --replay: record, then replay deterministically)',
    '  svc run FILE.sd [--verbose] [svc sim options]           simulation with 10 loop iterations (20 with --verbose)',
    '  svc replay FILE.trace [--deterministic | --playback [--wall-clock] | --inspect] [--from T] [--at T] [--show-faults]',
    '  svc trust FILE.sd [--project DIR] [--json | --format text|json|markdown]',
    '  svc explain [MODE] FILE [--baseline DIR]               MODE: program, readiness, verify, safety, trace, decision',
    '      (program commands: exit 0 ready/passed, 1 not, 2 usage or parse error; see docs/programs.md)',
    '  svc <command> [args] [--field value ...] [--body JSON] [--config svc.toml] [--program file.sd] [--url URL]',
    '',
    'Section commands (one part of a program report; --json, --config, --target, --all-targets; docs/programs.md):',
    ...sectionUsage(),
    '',
    'Commands (each is the REST operation shown; in-process by default, over REST with --url or SVC_CONTROL_CENTER_URL):',
    ...lines,
    '',
  ].join('\n');
}

function writeOutcome(outcome: { stdout: string; exitCode: number }): number {
  process.stdout.write(outcome.stdout);
  return outcome.exitCode;
}

/** Program commands speak to a person at a terminal: errors as one readable message, exit 2 for bad input. */
async function runProgram(run: () => Promise<{ stdout: string; exitCode: number }>): Promise<number> {
  try {
    return writeOutcome(await run());
  } catch (err) {
    if (err instanceof ApiError && (err.status === 400 || err.status === 404)) {
      process.stderr.write(`svc: ${err.message}\n`);
      return EXIT.usage;
    }
    throw err;
  }
}

export async function main(argv: readonly string[]): Promise<number> {
  const { words, options } = splitArgs(argv);
  try {
    if (words.length === 0 || words[0] === 'help' || options.has('help')) {
      process.stdout.write(usage());
      return words.length === 0 && !options.has('help') ? EXIT.usage : EXIT.ok;
    }
    // `svc control-center serve` is the reference's spelling of `svc serve` (docs/program-language.md §29).
    const serveWords = words[0] === 'serve' ? 1 : words[0] === 'control-center' && words[1] === 'serve' ? 2 : 0;
    if (serveWords > 0) {
      if (words.length > serveWords) throw new UsageError(`unexpected argument '${words[serveWords]}' for serve`);
      return (await serveCommand(options)) === 'running' ? -1 /* keeps running */ : EXIT.ok;
    }
    if (words[0] === 'relay') {
      // The fleet relay (docs/relay.md): loaded on demand, so it stays out of the agent's start bundle.
      const { relayCommand } = await import('../../relay/cli.js');
      return await relayCommand(words.slice(1), options);
    }
    if (words[0] === 'sim-device') {
      if (words.length > 1) throw new UsageError(`unexpected argument '${words[1]}' for sim-device`);
      await simDeviceCommand(options);
      return -1; // keeps running
    }
    if (words.join(' ') === 'control-center api-key generate') {
      apiKeyGenerateCommand(options);
      return EXIT.ok;
    }
    // Program commands load the parser and analyses on demand (see ProgramService).
    if (words[0] === 'check') {
      const { checkCommand } = await import('./check-command.js');
      return await runProgram(async () => checkCommand(words.slice(1), options));
    }
    // `svc run F` = `svc sim F` with 10 loop iterations (docs/program-language.md §24.1, §29).
    if (words[0] === 'run') {
      const { runRunCommand } = await import('./program-command.js');
      return await runProgram(() => runRunCommand(words.slice(1), options, loadSettings()));
    }
    // Section commands: one part of a program report (agent/cli/program-sections.ts, docs/programs.md).
    const section = findSectionCommand(words);
    if (section) {
      return await runProgram(() => runSectionCommand(section.command, section.rest, options, loadSettings()));
    }
    const found = findOperation(SPECS, words);
    if (!found) throw new UsageError(`unknown command '${words.join(' ')}' (try 'svc help')`);
    const programSpec = programCommandFor(found.op);
    if (programSpec) {
      const { runProgramCommand } = await import('./program-command.js');
      return await runProgram(() => runProgramCommand(programSpec, found.rest, options, loadSettings()));
    }
    const settings = loadSettings();
    const url = typeof options.get('url') === 'string' ? (options.get('url') as string) : settings.controlCenterUrl;
    const input = buildInput(found.op, found.rest, options, url ? undefined : process.cwd());
    const call = () => (url ? runRemote(found.op, input, url, settings.apiKey) : runLocal(found.op, input, options));
    const form = TEXT_FORMS[found.op.id];
    if (!form) {
      process.stdout.write(`${JSON.stringify(await call(), null, 2)}\n`);
      return EXIT.ok;
    }
    // A command with a text form speaks to a person like the program commands: text (or the REST
    // body with --json), exit 0 passed / 1 not, a refused or bad request as one line and exit 2.
    return await runProgram(async () => {
      const result = await call();
      const exitCode = form.passed && !form.passed(result) ? EXIT.failed : EXIT.ok;
      return { stdout: options.has('json') ? `${JSON.stringify(result, null, 2)}\n` : `${form.text(result)}\n`, exitCode };
    });
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`svc: ${err.message}\n`);
      return EXIT.usage;
    }
    if (err instanceof ConfigError || err instanceof ProjectError || err instanceof SettingsError) {
      process.stderr.write(`svc: ${err.message}\n`);
      return EXIT.usage;
    }
    if (err instanceof ApiError) {
      process.stderr.write(`${JSON.stringify(err.toEnvelope())}\n`);
      return err.status === 400 ? EXIT.usage : EXIT.failed;
    }
    process.stderr.write(`svc: ${(err as Error)?.stack ?? String(err)}\n`);
    return EXIT.failed;
  }
}
