/**
 * Gateway reachability (docs/spaces.md § Gateway reachability): a real TCP connect to the endpoint
 * the gateway's configuration names, bounded by `SVC_GATEWAY_PROBE_TIMEOUT_MS`. No shell, no
 * command templates: a connect either completes (reachable) or fails / times out (unreachable).
 */
import net from 'node:net';

export interface ProbeTarget {
  host: string;
  port: number;
}

export interface ProbeResult {
  /** `tcp` when a connect was attempted, `none` when the gateway names no endpoint. */
  probe: 'tcp' | 'none';
  endpoint: string | null;
  reachable: boolean | null;
  latency_ms: number | null;
  error: string | null;
}

const HOST = /^[A-Za-z0-9._:-]+$/;

function port(v: unknown): number | null {
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v.trim()) ? Number(v.trim()) : NaN;
  return Number.isInteger(n) && n >= 1 && n <= 65535 ? n : null;
}

/**
 * Where to connect, from the gateway's table: `endpoint` / `address` as `host:port` or a URL
 * (`tcp://`, `mqtt://`, `http://` …, whose port defaults by scheme), else `host` + `port`.
 * Returns null when nothing usable is named, or an error text when it is malformed.
 */
export function probeTarget(raw: Readonly<Record<string, unknown>>): ProbeTarget | { error: string } | null {
  const text = [raw['endpoint'], raw['address'], raw['endpoint_url']].find((v) => typeof v === 'string' && v.trim() !== '') as string | undefined;
  if (text !== undefined) {
    const t = text.trim();
    if (t.includes('://')) {
      let u: URL;
      try {
        u = new URL(t);
      } catch {
        return { error: `endpoint is not a URL: ${t}` };
      }
      const defaults: Record<string, number> = { 'http:': 80, 'https:': 443, 'mqtt:': 1883, 'mqtts:': 8883, 'coap:': 5683 };
      const p = u.port ? port(u.port) : (defaults[u.protocol] ?? null);
      const host = u.hostname.replace(/^\[|\]$/g, '');
      if (p === null || !HOST.test(host)) return { error: `endpoint names no usable host and port: ${t}` };
      return { host, port: p };
    }
    const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(t);
    const p = m ? port(m[2]) : null;
    if (!m || p === null || !HOST.test(m[1]!)) return { error: `endpoint must be host:port: ${t}` };
    return { host: m[1]!, port: p };
  }
  const host = typeof raw['host'] === 'string' ? raw['host'].trim() : '';
  if (host === '') return null;
  const p = port(raw['port']);
  if (p === null || !HOST.test(host)) return { error: 'host and port must name a TCP endpoint' };
  return { host, port: p };
}

/** One bounded TCP connect. */
export function tcpProbe(target: ProbeTarget, timeoutMs: number): Promise<ProbeResult> {
  const endpoint = `${target.host.includes(':') ? `[${target.host}]` : target.host}:${target.port}`;
  const started = Date.now();
  return new Promise((resolve) => {
    const socket = net.connect({ host: target.host, port: target.port });
    let done = false;
    const finish = (reachable: boolean, error: string | null) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ probe: 'tcp', endpoint, reachable, latency_ms: Date.now() - started, error });
    };
    const timer = setTimeout(() => finish(false, `no connection within ${timeoutMs} ms`), timeoutMs);
    socket.once('connect', () => finish(true, null));
    socket.once('error', (err: NodeJS.ErrnoException) => finish(false, err.code ?? err.message));
  });
}

/** The probe of a gateway table: a connect when it names an endpoint, `none` otherwise. */
export async function probeGateway(raw: Readonly<Record<string, unknown>>, timeoutMs: number): Promise<ProbeResult> {
  const target = probeTarget(raw);
  if (target === null) return { probe: 'none', endpoint: null, reachable: null, latency_ms: null, error: null };
  if ('error' in target) return { probe: 'tcp', endpoint: null, reachable: false, latency_ms: null, error: target.error };
  return tcpProbe(target, timeoutMs);
}
