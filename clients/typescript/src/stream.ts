/**
 * The telemetry stream (`/v1/stream/telemetry`, docs/streaming.md) with reconnect and resume.
 *
 * Offsets are absolute per backlog (telemetry, traces, alerts). The helper remembers the last offset
 * it delivered of each; after a disconnect it reconnects with exponential backoff and sends
 * `{"type":"resume","telemetry_offset":last+1,"trace_offset":…,"alert_offset":…}`. Frames at or below
 * an offset already delivered (the replay the server starts before it reads the resume) are dropped,
 * so no item is delivered twice. `backpressure` frames and the heartbeats' `dropped_frames` are
 * passed on: items the server dropped show as a gap in the offsets, never silently.
 */

/** The part of the WebSocket interface the helper uses (browsers, Node 22's global, the `ws` package). */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((ev: any) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code?: number; reason?: string }) => void) | null;
  onerror: ((ev: any) => void) | null;
}

/** `new WebSocket(url, protocols?, options?)`: the third argument carries headers for `ws`. */
export type WebSocketConstructor = new (url: string, protocols?: string | string[], options?: any) => WebSocketLike;

export interface StreamOffsets {
  telemetry: number;
  trace: number;
  alert: number;
}

export interface TraceRecord {
  correlation_id: string;
  method: string;
  path: string;
  status: number;
  timestamp_ms: number;
  duration_ms: number;
  [key: string]: unknown;
}

export interface TelemetryEvent {
  kind: string;
  [key: string]: unknown;
}

export interface HelloFrame {
  type: 'hello';
  version: string;
  stream: string;
  contract: { resume_supported: boolean; max_pending_frames: number; heartbeat_interval_ms: number; reconnect?: unknown };
}

export interface HeartbeatFrame {
  type: 'heartbeat';
  offsets: { telemetry: number; traces: number; alerts: number };
  dropped_frames: number;
}

export interface BackpressureFrame {
  type: 'backpressure';
  paused: boolean;
  pending_frames: number;
  dropped_frames: number;
}

export interface ResumedFrame {
  type: 'resumed';
  telemetry_offset: number;
  trace_offset: number;
  alert_offset: number;
}

export interface StreamOptions {
  onTelemetry?: (event: TelemetryEvent, offset: number) => void;
  onAlert?: (alert: Record<string, unknown>, offset: number) => void;
  onTrace?: (record: TraceRecord, offset: number) => void;
  onBackpressure?: (frame: BackpressureFrame) => void;
  onHeartbeat?: (frame: HeartbeatFrame) => void;
  onHello?: (frame: HelloFrame) => void;
  onResumed?: (frame: ResumedFrame) => void;
  /** Every parsed frame, before the typed callbacks (including duplicates that are then dropped). */
  onFrame?: (frame: Record<string, unknown>) => void;
  /** The socket opened (`reconnect` is true after the first connection). */
  onOpen?: (info: { reconnect: boolean }) => void;
  /** The socket closed; `willReconnect` says whether the helper tries again (after `delayMs`). */
  onClose?: (info: { code: number | undefined; reason: string | undefined; willReconnect: boolean; delayMs: number }) => void;
  onError?: (error: unknown) => void;
  /** Stops the stream like `close()`. */
  signal?: AbortSignal;
  /** Offsets already seen (the last delivered of each): the first connection resumes after them. */
  resumeFrom?: Partial<StreamOffsets>;
  /**
   * Start each backlog's replay at most this many items before its head (`?tail=N`, docs/streaming.md
   * § Delivery) instead of at the oldest item the agent holds; 0: only what arrives from now on.
   * Reconnects still resume after the last offset delivered.
   */
  tail?: number;
  /** Reconnect after a disconnect (default true). */
  reconnect?: boolean;
  /** First reconnect delay (default 250 ms), doubled per failed attempt up to `maxDelayMs` (default 10 s). */
  initialDelayMs?: number;
  maxDelayMs?: number;
  /** Give up after this many consecutive failed attempts (default: never). */
  maxRetries?: number;
  /**
   * How the key travels: `header` (`Authorization`, for `ws` and other implementations that take
   * headers), `query` (`?access_token=`, browsers). Default: `query` for the global WebSocket,
   * `header` for an injected one.
   */
  tokenIn?: 'header' | 'query';
  /** A WebSocket constructor (overrides the client's). */
  WebSocket?: WebSocketConstructor;
}

export interface StreamHandle {
  /** The last offset delivered of each backlog (-1: none yet). */
  readonly offsets: StreamOffsets;
  /** The latest `dropped_frames` the server reported (heartbeat or backpressure). */
  readonly droppedFrames: number;
  /** Whether the socket is open now. */
  readonly connected: boolean;
  /** Resolves on the first `hello` frame. */
  readonly ready: Promise<HelloFrame>;
  /** Sends `{"type":"ping"}` (the server answers `pong`). */
  ping(): void;
  /** Closes the stream for good (no reconnect). */
  close(): void;
}

/** The `ws://`/`wss://` URL of the stream for an `http(s)://` base (an agent, or `…/agents/{id}` on a relay). */
export function streamUrl(baseUrl: string): string {
  return `${baseUrl.replace(/\/+$/, '').replace(/^http(s?):\/\//i, 'ws$1://')}/v1/stream/telemetry`;
}

const OPEN = 1;

export function openStream(options: StreamOptions & { baseUrl: string; apiKey?: string | undefined; WebSocket: WebSocketConstructor }): StreamHandle {
  const WS = options.WebSocket;
  const isGlobal = WS === (globalThis as { WebSocket?: unknown }).WebSocket;
  const tokenIn = options.tokenIn ?? (isGlobal ? 'query' : 'header');
  const initialDelay = options.initialDelayMs ?? 250;
  const maxDelay = options.maxDelayMs ?? 10_000;
  const maxRetries = options.maxRetries ?? Infinity;
  const reconnect = options.reconnect ?? true;
  const offsets: StreamOffsets = {
    telemetry: options.resumeFrom?.telemetry ?? -1,
    trace: options.resumeFrom?.trace ?? -1,
    alert: options.resumeFrom?.alert ?? -1,
  };
  let dropped = 0;
  let socket: WebSocketLike | null = null;
  let closed = false;
  let connections = 0;
  let failures = 0;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let resolveReady!: (h: HelloFrame) => void;
  let rejectReady!: (e: unknown) => void;
  const ready = new Promise<HelloFrame>((res, rej) => {
    resolveReady = res;
    rejectReady = rej;
  });
  ready.catch(() => undefined);

  const call = <A extends unknown[]>(fn: ((...a: A) => void) | undefined, ...args: A) => {
    if (!fn) return;
    try {
      fn(...args);
    } catch (err) {
      options.onError?.(err);
    }
  };

  const url = () => {
    const params: string[] = [];
    if (options.apiKey && tokenIn === 'query') params.push(`access_token=${encodeURIComponent(options.apiKey)}`);
    if (options.tail !== undefined && Number.isInteger(options.tail) && options.tail >= 0) params.push(`tail=${options.tail}`);
    const u = streamUrl(options.baseUrl);
    return params.length > 0 ? `${u}?${params.join('&')}` : u;
  };

  const anySeen = () => offsets.telemetry >= 0 || offsets.trace >= 0 || offsets.alert >= 0;

  const handle = (frame: Record<string, unknown>) => {
    call(options.onFrame, frame);
    const offset = typeof frame.offset === 'number' ? frame.offset : -1;
    switch (frame.type) {
      case 'hello':
        failures = 0;
        call(options.onHello, frame as unknown as HelloFrame);
        resolveReady(frame as unknown as HelloFrame);
        return;
      case 'resumed':
        call(options.onResumed, frame as unknown as ResumedFrame);
        return;
      case 'heartbeat':
        if (typeof frame.dropped_frames === 'number') dropped = frame.dropped_frames;
        call(options.onHeartbeat, frame as unknown as HeartbeatFrame);
        return;
      case 'backpressure':
        if (typeof frame.dropped_frames === 'number') dropped = frame.dropped_frames;
        call(options.onBackpressure, frame as unknown as BackpressureFrame);
        return;
      case 'telemetry':
        if (offset >= 0 && offset <= offsets.telemetry) return;
        if (offset >= 0) offsets.telemetry = offset;
        call(options.onTelemetry, frame.event as TelemetryEvent, offset);
        return;
      case 'alert':
        if (offset >= 0 && offset <= offsets.alert) return;
        if (offset >= 0) offsets.alert = offset;
        call(options.onAlert, frame.alert as Record<string, unknown>, offset);
        return;
      case 'trace':
        if (offset >= 0 && offset <= offsets.trace) return;
        if (offset >= 0) offsets.trace = offset;
        call(options.onTrace, frame.record as TraceRecord, offset);
        return;
      default:
        return;
    }
  };

  const connect = () => {
    timer = null;
    if (closed) return;
    let ws: WebSocketLike;
    try {
      ws =
        options.apiKey && tokenIn === 'header'
          ? new WS(url(), undefined, { headers: { authorization: `Bearer ${options.apiKey}` } })
          : new WS(url());
    } catch (err) {
      call(options.onError, err);
      scheduleReconnect(undefined, String(err));
      return;
    }
    socket = ws;
    let scheduled = false;
    ws.onopen = () => {
      if (closed) return;
      const again = connections++ > 0;
      if (anySeen()) {
        ws.send(
          JSON.stringify({
            type: 'resume',
            telemetry_offset: offsets.telemetry + 1,
            trace_offset: offsets.trace + 1,
            alert_offset: offsets.alert + 1,
          }),
        );
      }
      call(options.onOpen, { reconnect: again });
    };
    ws.onmessage = (ev) => {
      if (closed || socket !== ws) return;
      let frame: unknown;
      try {
        frame = JSON.parse(typeof ev.data === 'string' ? ev.data : new TextDecoder().decode(ev.data as ArrayBuffer));
      } catch (err) {
        call(options.onError, err);
        return;
      }
      if (frame && typeof frame === 'object') handle(frame as Record<string, unknown>);
    };
    ws.onerror = (ev) => {
      if (closed) return;
      call(options.onError, (ev as { error?: unknown })?.error ?? ev);
    };
    ws.onclose = (ev) => {
      if (socket === ws) socket = null;
      if (scheduled) return;
      scheduled = true;
      scheduleReconnect(ev?.code, ev?.reason);
    };
  };

  const scheduleReconnect = (code: number | undefined, reason: string | undefined) => {
    if (closed) {
      call(options.onClose, { code, reason, willReconnect: false, delayMs: 0 });
      return;
    }
    failures++;
    const willReconnect = reconnect && failures <= maxRetries;
    const base = Math.min(maxDelay, initialDelay * 2 ** Math.max(0, failures - 1));
    const delayMs = Math.round(base * (0.75 + Math.random() * 0.25));
    call(options.onClose, { code, reason, willReconnect, delayMs });
    if (!willReconnect) {
      closed = true;
      rejectReady(new Error(`stream closed${code !== undefined ? ` (${code})` : ''}${reason ? `: ${reason}` : ''}`));
      return;
    }
    timer = setTimeout(connect, delayMs);
  };

  const close = () => {
    if (closed) return;
    closed = true;
    if (timer) clearTimeout(timer);
    timer = null;
    const ws = socket;
    socket = null;
    rejectReady(new Error('stream closed'));
    if (ws) {
      try {
        ws.close(1000, 'client close');
      } catch {
        /* already closing */
      }
    }
  };

  if (options.signal) {
    if (options.signal.aborted) closed = true;
    else options.signal.addEventListener('abort', close, { once: true });
  }
  if (!closed) connect();

  return {
    get offsets() {
      return { ...offsets };
    },
    get droppedFrames() {
      return dropped;
    },
    get connected() {
      return socket !== null && socket.readyState === OPEN;
    },
    ready,
    ping() {
      if (socket && socket.readyState === OPEN) socket.send(JSON.stringify({ type: 'ping' }));
    },
    close,
  };
}
