import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import tls from 'node:tls';

/**
 * The agent's one HTTP client for calls it makes itself: alert webhooks, PagerDuty, Teams, report
 * delivery, OTLP pushes, deploy and fleet agents (docs/operations.md § Outbound HTTP). It speaks TLS
 * with Node's bundled roots plus the system trust store (Debian's `/etc/ssl/certs/ca-certificates.crt`)
 * and an optional extra CA file (`SVC_OUTBOUND_CA_FILE`), and bounds every call: 10 s to connect,
 * 30 s in all (reference digest fleet-operations §1.5). Only `http:` and `https:` URLs are accepted,
 * so a caller-supplied endpoint cannot reach `file:` or other schemes.
 */

export interface OutboundRequest {
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** A value sent as JSON, or a string sent as is with `contentType`. */
  body?: unknown;
  contentType?: string;
  bearer?: string | null;
  headers?: Record<string, string>;
  connectTimeoutMs?: number;
  totalTimeoutMs?: number;
}

export interface OutboundResponse {
  status: number;
  /** 2xx. */
  ok: boolean;
  text: string;
  headers: http.IncomingHttpHeaders;
}

/** A call that got no HTTP answer: bad URL, refused connection, TLS failure, timeout. */
export class OutboundError extends Error {
  constructor(
    message: string,
    readonly url: string,
  ) {
    super(message);
    this.name = 'OutboundError';
  }
}

export const CONNECT_TIMEOUT_MS = 10_000;
export const TOTAL_TIMEOUT_MS = 30_000;
const MAX_RESPONSE_BYTES = 4 * 1024 * 1024;
const SYSTEM_BUNDLES = ['/etc/ssl/certs/ca-certificates.crt', '/etc/pki/tls/certs/ca-bundle.crt'];

/** The URL when it is absolute `http(s)://`; otherwise throws an `OutboundError` naming the rule. */
export function httpUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutboundError(`invalid URL '${raw}'`, raw);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new OutboundError(`unsupported URL scheme '${url.protocol}' (only http:// and https://)`, raw);
  }
  return url;
}

/** True for an absolute `http(s)://` URL. */
export function isHttpUrl(raw: string): boolean {
  try {
    httpUrl(raw);
    return true;
  } catch {
    return false;
  }
}

/** The configured extra CA file's text: read at start, so a file that cannot be read stops the start. */
function readExtraCa(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`SVC_OUTBOUND_CA_FILE: cannot read ${file}: ${(err as Error).message}`);
  }
}

function trustedRoots(extraCa: string | null): string[] {
  const roots = [...tls.rootCertificates];
  for (const file of SYSTEM_BUNDLES) {
    try {
      roots.push(readFileSync(file, 'utf8'));
    } catch {
      // The system bundles are optional.
    }
  }
  if (extraCa !== null) roots.push(extraCa);
  return roots;
}

export class OutboundHttp {
  private readonly extraCa: string | null;
  private httpsAgentOnce: https.Agent | null = null;
  private readonly httpAgent = new http.Agent({ keepAlive: false });

  constructor(options: { extraCaFile?: string | null } = {}) {
    this.extraCa = options.extraCaFile ? readExtraCa(options.extraCaFile) : null;
  }

  /**
   * The HTTPS agent with the bundled, system and configured roots, built on the first HTTPS call: the
   * root list (Node's bundled roots as strings plus the system bundle, ~0.5 MiB) is not held by an
   * agent that never calls out over HTTPS (README.md § Benchmarks, idle RSS).
   */
  private get httpsAgent(): https.Agent {
    return (this.httpsAgentOnce ??= new https.Agent({ keepAlive: false, ca: trustedRoots(this.extraCa) }));
  }

  /** Sends one request; resolves with any HTTP answer (check `ok`), rejects with `OutboundError` when there is none. */
  async request(rawUrl: string, req: OutboundRequest = {}): Promise<OutboundResponse> {
    const url = httpUrl(rawUrl);
    const method = req.method ?? (req.body === undefined ? 'GET' : 'POST');
    const payload =
      req.body === undefined ? undefined : typeof req.body === 'string' ? Buffer.from(req.body) : Buffer.from(JSON.stringify(req.body));
    const headers: Record<string, string> = { 'user-agent': 'svc-control-center', accept: 'application/json, */*', ...(req.headers ?? {}) };
    if (payload) {
      headers['content-type'] = req.contentType ?? (typeof req.body === 'string' ? 'text/plain' : 'application/json');
      headers['content-length'] = String(payload.length);
    }
    if (req.bearer) headers['authorization'] = `Bearer ${req.bearer}`;
    const connectMs = req.connectTimeoutMs ?? CONNECT_TIMEOUT_MS;
    const totalMs = req.totalTimeoutMs ?? TOTAL_TIMEOUT_MS;
    const secure = url.protocol === 'https:';
    return new Promise<OutboundResponse>((resolve, reject) => {
      let settled = false;
      const fail = (message: string) => {
        if (settled) return;
        settled = true;
        clearTimeout(total);
        clearTimeout(connect);
        request.destroy();
        reject(new OutboundError(message, rawUrl));
      };
      const request = (secure ? https : http).request(url, { method, headers, agent: secure ? this.httpsAgent : this.httpAgent });
      const total = setTimeout(() => fail(`${method} ${rawUrl} timed out after ${totalMs} ms`), totalMs);
      const connect = setTimeout(() => fail(`${method} ${rawUrl}: no connection within ${connectMs} ms`), connectMs);
      request.once('socket', (socket) => {
        const connected = () => clearTimeout(connect);
        if (!socket.connecting) connected();
        else socket.once(secure ? 'secureConnect' : 'connect', connected);
      });
      request.once('error', (err) => fail(`${method} ${rawUrl} failed: ${err.message}`));
      request.once('response', (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_RESPONSE_BYTES) fail(`${method} ${rawUrl}: response larger than ${MAX_RESPONSE_BYTES} bytes`);
          else chunks.push(chunk);
        });
        res.once('error', (err) => fail(`${method} ${rawUrl} failed: ${err.message}`));
        res.once('end', () => {
          if (settled) return;
          settled = true;
          clearTimeout(total);
          clearTimeout(connect);
          const status = res.statusCode ?? 0;
          resolve({ status, ok: status >= 200 && status < 300, text: Buffer.concat(chunks).toString('utf8'), headers: res.headers });
        });
      });
      request.end(payload);
    });
  }

  postJson(url: string, body: unknown, req: Omit<OutboundRequest, 'body' | 'method'> = {}): Promise<OutboundResponse> {
    return this.request(url, { ...req, method: 'POST', body });
  }

  /** GET and parse JSON; an HTTP error or a body that is not JSON rejects with `OutboundError`. */
  async getJson<T = unknown>(url: string, req: Omit<OutboundRequest, 'body' | 'method'> = {}): Promise<T> {
    const res = await this.request(url, { ...req, method: 'GET' });
    if (!res.ok) throw new OutboundError(`GET ${url} answered HTTP ${res.status}`, url);
    try {
      return JSON.parse(res.text) as T;
    } catch {
      throw new OutboundError(`GET ${url} did not answer JSON`, url);
    }
  }

  close(): void {
    this.httpsAgentOnce?.destroy();
    this.httpAgent.destroy();
  }
}
