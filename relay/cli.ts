import path from 'node:path';
import { UsageError } from '../agent/cli/args.js';
import { loadSettings } from '../agent/settings/settings.js';
import { Enrollments } from './enrollments.js';
import { parseTtl, RelayKeys } from './keys.js';
import type { HostPort } from './server.js';

/** `svc relay …` (docs/relay.md). Reached from agent/cli/main.ts through a dynamic import only. */

export const RELAY_USAGE = [
  'Usage:',
  '  svc relay serve [--bind host:port] [--mqtt-bind host:port] [--mqtt-url URL] [--state-dir DIR] [--node NAME] [--request-timeout-ms N]',
  '  svc relay enroll --tenant T --agent A [--ttl 24h] [--state-dir DIR]',
  '',
].join('\n');

export const DEFAULT_RELAY_STATE_DIR = '.svc-relay';

function text(options: Map<string, string | true>, name: string): string | null {
  const v = options.get(name);
  if (v === true) throw new UsageError(`--${name} needs a value`);
  return v ?? null;
}

export function parseHostPort(value: string, name: string): HostPort {
  const m = /^\[?([^\]]*?)\]?:(\d{1,5})$/.exec(value.trim());
  if (!m || Number(m[2]) > 65535) throw new UsageError(`--${name}: expected host:port, got '${value}'`);
  return { host: m[1] || '127.0.0.1', port: Number(m[2]) };
}

function stateDir(options: Map<string, string | true>): string {
  return path.resolve(text(options, 'state-dir') ?? DEFAULT_RELAY_STATE_DIR);
}

export async function relayCommand(words: readonly string[], options: Map<string, string | true>): Promise<number> {
  const sub = words[0];
  if (sub === 'enroll') {
    const tenant = text(options, 'tenant');
    const agent = text(options, 'agent');
    if (!tenant || !agent) throw new UsageError('relay enroll needs --tenant T and --agent A');
    let ttl: number;
    try {
      ttl = parseTtl(text(options, 'ttl') ?? '24h');
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    const dir = stateDir(options);
    const keys = await RelayKeys.open(dir);
    const enrollments = await Enrollments.open(dir, keys, (l) => process.stderr.write(`${l}\n`));
    try {
      const issued = await enrollments.issue(tenant, agent, ttl);
      process.stdout.write(`${JSON.stringify({ token: issued.token, relay_public_key: issued.relay_public_key, expires_at: issued.expires_at, tenant_id: tenant, agent_id: agent }, null, 2)}\n`);
    } catch (err) {
      throw new UsageError((err as Error).message);
    } finally {
      await enrollments.close();
    }
    return 0;
  }
  if (sub === 'serve') {
    if (words.length > 1) throw new UsageError(`unexpected argument '${words[1]}' for relay serve`);
    const settings = loadSettings();
    const timeout = text(options, 'request-timeout-ms');
    if (timeout !== null && !/^\d+$/.test(timeout)) throw new UsageError('--request-timeout-ms: expected a whole number');
    const { Relay } = await import('./server.js');
    const relay = await Relay.start({
      stateDir: stateDir(options),
      bind: parseHostPort(text(options, 'bind') ?? '127.0.0.1:8443', 'bind'),
      mqttBind: parseHostPort(text(options, 'mqtt-bind') ?? '127.0.0.1:1883', 'mqtt-bind'),
      mqttUrl: text(options, 'mqtt-url'),
      ...(text(options, 'node') ? { node: text(options, 'node')! } : {}),
      tenantId: settings.tenantId,
      apiKey: settings.apiKey,
      pepper: settings.pepper,
      maxBodyBytes: settings.maxBodyBytes,
      ...(timeout !== null ? { requestTimeoutMs: Number(timeout) } : {}),
    });
    const broker = relay.broker ? `embedded broker on mqtt://${text(options, 'mqtt-bind') ?? '127.0.0.1:1883'} and ws /mqtt` : `external broker ${redact(text(options, 'mqtt-url')!)}`;
    process.stdout.write(`svc relay ${relay.node} listening on ${relay.baseUrl} (${broker}, state ${stateDir(options)})\n`);
    const stop = () => {
      relay.close().finally(() => process.exit(0));
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    return -1;
  }
  process.stdout.write(RELAY_USAGE);
  return sub === undefined || sub === 'help' ? 0 : 2;
}

function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url;
  }
}
