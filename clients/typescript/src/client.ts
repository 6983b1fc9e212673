import { ConnectionError, SvcError, errorFromResponse } from './errors.js';
import { GeneratedOperations, OPERATIONS, type CallArgs, type OperationId } from './generated/operations.js';
import { openStream, type StreamHandle, type StreamOptions, type WebSocketConstructor } from './stream.js';

export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

export interface SvcClientOptions {
  /**
   * The agent (`http://127.0.0.1:8080`), or an agent through the relay (`http://RELAY/agents/{id}`):
   * every `/v1/...` path is appended to it.
   */
  baseUrl: string;
  /** API key or session token, sent as `Authorization: Bearer …`. */
  apiKey?: string | undefined;
  /** A `fetch` implementation; defaults to the global one. */
  fetch?: FetchLike | undefined;
  /** A WebSocket constructor for `stream()`; defaults to the global one (browsers, Node 22+). Pass `ws` on Node 20. */
  WebSocket?: WebSocketConstructor | undefined;
  /** Headers sent with every request. */
  headers?: Record<string, string> | undefined;
}

/** The default address of a local agent. */
export const LOCAL_URL = 'http://127.0.0.1:8080';

/** Where a request went: the contract's operation, or a raw path. */
interface Target {
  id?: string;
  group?: string;
  template?: string;
  mutation: boolean;
}

/**
 * Client of the svc-control-center `/v1` API: one typed method per operation of the contract
 * (generated, `src/generated/operations.ts`), the telemetry stream (`stream()`), and `request()` for
 * anything else.
 */
export class SvcClient extends GeneratedOperations {
  readonly baseUrl: string;
  readonly apiKey: string | undefined;
  readonly #fetch: FetchLike;
  readonly #WebSocket: WebSocketConstructor | undefined;
  readonly #headers: Record<string, string>;

  constructor(options: SvcClientOptions) {
    super();
    if (!options || typeof options.baseUrl !== 'string' || !options.baseUrl) throw new TypeError('SvcClient: baseUrl is required');
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.apiKey = options.apiKey || undefined;
    const f = options.fetch ?? (globalThis.fetch as FetchLike | undefined);
    if (!f) throw new TypeError('SvcClient: no global fetch; pass options.fetch');
    this.#fetch = options.fetch ? options.fetch : (input, init) => globalThis.fetch(input, init);
    this.#WebSocket = options.WebSocket;
    this.#headers = { ...(options.headers ?? {}) };
  }

  /** A client of the agent on this machine, `http://127.0.0.1:8080`. */
  static local(options: Partial<SvcClientOptions> = {}): SvcClient {
    return new SvcClient({ ...options, baseUrl: options.baseUrl ?? LOCAL_URL });
  }

  /**
   * A client configured by `SVC_CONTROL_CENTER_URL` (default `http://127.0.0.1:8080`) and `SVC_API_KEY`.
   * `env` defaults to `process.env` where there is one; browsers pass their own object.
   */
  static fromEnv(env?: Record<string, string | undefined>, options: Partial<SvcClientOptions> = {}): SvcClient {
    const source = env ?? (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env ?? {};
    return new SvcClient({
      ...options,
      baseUrl: source.SVC_CONTROL_CENTER_URL || options.baseUrl || LOCAL_URL,
      apiKey: source.SVC_API_KEY || options.apiKey,
    });
  }

  /** The URL of a `/v1/...` path (path parameters already filled) with its query. */
  url(path: string, query?: Record<string, unknown>): string {
    const qs = encodeQuery(query);
    return `${this.baseUrl}${path.startsWith('/') ? path : `/${path}`}${qs ? `?${qs}` : ''}`;
  }

  protected override call(id: OperationId, params: Record<string, string>, args: CallArgs): Promise<any> {
    const op = OPERATIONS[id];
    const path = op.path.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => {
      const value = params[name];
      if (value === undefined || value === null || value === '') throw new TypeError(`${id}: path parameter ${name} is required`);
      return encodeURIComponent(String(value));
    });
    return this.#send(op.method, path, args, { id, group: op.group, template: op.path, mutation: op.mutation });
  }

  /**
   * Any request: `client.request('GET', '/v1/devices')`. The key is sent when present; the answer is
   * parsed like an operation's.
   */
  request(method: string, path: string, args: CallArgs = {}): Promise<any> {
    const m = method.toUpperCase();
    return this.#send(m, path, args, { mutation: m !== 'GET' && m !== 'HEAD' });
  }

  async #send(method: string, path: string, args: CallArgs, target: Target): Promise<any> {
    const headers: Record<string, string> = {
      accept: 'application/json',
      'x-svc-api-version': 'v1',
      ...this.#headers,
    };
    // The key goes with every mutation and with reads whenever there is one (a read without one is
    // anonymous; a mutation without one gets the agent's 401, mapped to PermissionError).
    if (this.apiKey) headers.authorization = `Bearer ${this.apiKey}`;
    Object.assign(headers, args.headers ?? {});
    let body: RequestInit['body'] | undefined;
    if (args.body !== undefined && method !== 'GET' && method !== 'HEAD') {
      if (typeof args.body === 'string' || args.body instanceof Uint8Array || args.body instanceof ArrayBuffer) {
        body = args.body as RequestInit['body'];
      } else {
        body = JSON.stringify(args.body);
        headers['content-type'] ??= 'application/json';
      }
    } else if (method !== 'GET' && method !== 'HEAD' && method !== 'DELETE') {
      body = '{}';
      headers['content-type'] ??= 'application/json';
    }
    const url = this.url(path, args.query);
    const op = { id: target.id, path: target.template ?? path, group: target.group };
    let res: Response;
    try {
      res = await this.#fetch(url, { method, headers, ...(body !== undefined ? { body } : {}), ...(args.signal ? { signal: args.signal } : {}) });
    } catch (cause) {
      const message = cause instanceof Error ? cause.message : String(cause);
      throw new ConnectionError(`${method} ${url}: ${message}`, { status: 0, code: 'connection_failed', operation: target.id, cause });
    }
    let parsed: unknown;
    try {
      parsed = await readBody(res);
    } catch (cause) {
      throw new ConnectionError(`${method} ${url}: answer could not be read`, { status: res.status, code: 'connection_failed', operation: target.id, cause });
    }
    if (!res.ok) throw errorFromResponse(res.status, parsed, op);
    return parsed;
  }

  /**
   * Opens the telemetry stream (`/v1/stream/telemetry`): traces, alerts, telemetry, heartbeats and
   * backpressure frames, with reconnect and resume offsets (see `stream.ts`).
   */
  stream(options: StreamOptions = {}): StreamHandle {
    const WebSocketImpl = options.WebSocket ?? this.#WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
    if (!WebSocketImpl) throw new SvcError('no WebSocket implementation: pass { WebSocket } (e.g. from the `ws` package on Node 20)', { status: 0, code: 'no_websocket' });
    return openStream({ baseUrl: this.baseUrl, apiKey: this.apiKey, WebSocket: WebSocketImpl, ...options });
  }
}

async function readBody(res: Response): Promise<unknown> {
  if (res.status === 204) return undefined;
  const type = res.headers.get('content-type') ?? '';
  if (/json/i.test(type)) {
    const text = await res.text();
    if (!text) return undefined;
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  if (/^text\/|xml|yaml|csv|x-ndjson/i.test(type) || type === '') {
    const text = await res.text();
    if (type === '') {
      try {
        return JSON.parse(text);
      } catch {
        return text;
      }
    }
    return text;
  }
  return new Uint8Array(await res.arrayBuffer());
}

function encodeQuery(query: Record<string, unknown> | undefined): string {
  if (!query) return '';
  const parts: string[] = [];
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    // The agent reads one value per query name; a list travels comma-separated (`health=degraded,offline`).
    const s = Array.isArray(value) ? value.map(String).join(',') : typeof value === 'object' ? JSON.stringify(value) : String(value);
    parts.push(`${encodeURIComponent(key)}=${encodeURIComponent(s)}`);
  }
  return parts.join('&');
}
