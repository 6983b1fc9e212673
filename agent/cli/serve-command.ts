import { Agent, DEFAULT_BIND } from '../runtime/agent.js';
import { parseBindAddress } from '../runtime/bind-address.js';
import { UsageError } from './args.js';

const SERVE_OPTIONS = new Set(['config', 'program', 'bind', 'grpc-bind', 'relay', 'enroll-token', 'once']);

function stringOption(options: Map<string, string | true>, name: string): string | null {
  const v = options.get(name);
  if (v === undefined) return null;
  if (v === true) throw new UsageError(`--${name} needs a value`);
  return v;
}

/**
 * `svc serve [--config svc.toml] [--program file.sd] [--bind host:port] [--grpc-bind host:port]
 * [--relay URL --enroll-token TOKEN] [--once]` (the relay options win over SVC_RELAY_URL /
 * SVC_RELAY_ENROLL_TOKEN); `svc control-center serve` is the same command (docs/program-language.md §29).
 * `--once` is a start-up check: the agent loads its configuration and program, binds, prints where it
 * listens, then stops (resolves 'stopped'); without it the agent keeps running ('running').
 */
export async function serveCommand(options: Map<string, string | true>): Promise<'running' | 'stopped'> {
  for (const k of options.keys()) if (!SERVE_OPTIONS.has(k)) throw new UsageError(`unknown option --${k} for serve`);
  if (typeof options.get('once') === 'string') throw new UsageError(`--once takes no value (got '${options.get('once')}')`);
  const bind = stringOption(options, 'bind') ?? DEFAULT_BIND;
  const grpcBind = stringOption(options, 'grpc-bind');
  try {
    parseBindAddress(bind);
    if (grpcBind) parseBindAddress(grpcBind);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const relayUrl = stringOption(options, 'relay');
  const enrollToken = stringOption(options, 'enroll-token');
  const agent = await Agent.create({
    configPath: stringOption(options, 'config'),
    programPath: stringOption(options, 'program'),
    bind,
    grpcBind,
    ...(relayUrl || enrollToken ? { relay: { ...(relayUrl ? { url: relayUrl } : {}), ...(enrollToken ? { enrollToken } : {}) } } : {}),
  });
  let address: string;
  try {
    address = await agent.listen();
  } catch (err) {
    await agent.close().catch(() => undefined);
    throw err;
  }
  const s = agent.services;
  process.stdout.write(
    `svc agent listening on http://${address} (tenant ${s.settings.tenantId}, state ${s.settings.stateDir}` +
      `${s.project.config ? `, project ${s.project.config.projectName ?? s.project.configPath}` : ''})\n`,
  );
  const relay = agent.relayStatus;
  if (relay) process.stdout.write(`svc relay trunk: agent ${relay.agent_id} dialling ${relay.transport}://${relay.relay_host} in the background\n`);
  if (s.listen.grpcBind) process.stdout.write(`svc gRPC (svc.v1.ControlCenter, reflection on) listening on ${s.listen.grpcBind}\n`);
  if (options.has('once')) {
    await agent.close();
    process.stdout.write('svc agent started and stopped (--once)\n');
    return 'stopped';
  }
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`${signal}: flushing state and stopping\n`);
    agent.close().then(
      () => process.exit(0),
      (err: Error) => {
        process.stderr.write(`shutdown failed: ${err.message}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  return 'running';
}
