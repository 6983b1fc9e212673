/** What the stream reads of a backlog (a `Ring`): offsets, items by offset, and new appends. */
export interface Backlog {
  readonly headOffset: number;
  readonly oldestOffset: number;
  at(offset: number): unknown;
  /** The item's JSON, when the backlog can serialise it once for all readers (`Ring.json`). */
  json?(item: never): string;
  onAppend(listener: (item: unknown, offset: number) => void): () => void;
}

/** The socket operations a stream connection needs; `send`'s callback fires once the write completed. */
export interface StreamSocket {
  send(data: string, done: (err?: Error) => void): void;
  close(code: number, reason: string): void;
  /**
   * Bytes handed to the socket that have not left the process yet (`ws.bufferedAmount`: the net
   * socket's `writableLength` plus the sender's own queue). A write whose bytes left is complete even
   * though its callback only fires on a later tick. Without it every write counts as waiting until its
   * callback, and at most `MAX_IN_FLIGHT` writes are handed over at once.
   */
  bufferedAmount?(): number;
  /** Runs `writes` with the socket corked, so the frames they send go out in one write. */
  batch?(writes: () => void): void;
}

export type BacklogName = 'telemetry' | 'traces' | 'alerts';
const BACKLOG_NAMES: readonly BacklogName[] = ['telemetry', 'traces', 'alerts'];

/** Frame `type` and payload key of each backlog (docs/streaming.md, "Frames from the server"). */
const FRAME_SHAPE: Record<BacklogName, { type: string; key: string }> = {
  telemetry: { type: 'telemetry', key: 'event' },
  traces: { type: 'trace', key: 'record' },
  alerts: { type: 'alert', key: 'alert' },
};

export interface StreamOptions {
  maxPendingFrames: number;
  heartbeatIntervalMs: number;
  /** 0 = no end; otherwise close normally (1000) after this many seconds. */
  streamSeconds: number;
  /** A frame whose content carries another tenant's id is never sent (docs/wire-decisions.md D6). */
  tenantId: string;
  /**
   * `?tail=N` on the upgrade: each backlog's replay starts at most N items before its head instead of
   * at the oldest item it holds (docs/streaming.md § Delivery), so a client of a long-running agent
   * is not sent everything first. Undefined: replay all.
   */
  tail?: number | undefined;
}

export interface StreamStats {
  pending_frames: number;
  dropped_frames: number;
  sent_frames: number;
  paused: boolean;
}

/**
 * For a socket that cannot report its buffered bytes: writes handed to it at once. Small on purpose:
 * frames wait in our queue, where the oldest can still be dropped, instead of in the socket buffer,
 * where nothing can be taken back.
 */
const MAX_IN_FLIGHT = 4;

/**
 * For a socket that reports its buffered bytes: frames are handed to it while fewer than this many
 * bytes wait in it (and fewer than half the pending-frame limit, so a stuck reader's backlog stays in
 * our queue, where the oldest can be dropped). A client that reads keeps this near 0: the kernel takes
 * each batch at once.
 */
export const SOCKET_BUDGET_BYTES = 64 * 1024;

/**
 * Unwritten optional control frames (`pong`, `heartbeat`, `resumed`) allowed at once. They bypass the
 * data-frame capacity, so without a bound a client that sends pings (or resumes) but never reads would
 * make the server buffer replies without limit. A client that reads never gets near it.
 */
export const MAX_CONTROL_IN_FLIGHT = 64;

/** Node timers take at most a signed 32-bit delay; a longer one fires after 1 ms instead. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * One client of `WS /v1/stream/telemetry` (docs/wire-decisions.md D6, docs/streaming.md). Each backlog has a cursor: at connect (and
 * after `resume`) the connection replays from the cursor, pulling only as fast as the client takes
 * frames; once a backlog is caught up, new items are pushed as they arrive. Pending frames (queued, or
 * handed to the socket with bytes still waiting in it) are capped; when a new frame finds the cap
 * reached, the oldest queued frame is dropped, counted and announced with a `backpressure` frame, and
 * `paused:false` follows once the queue drained to half. Items a slow replay lost to ring overrun are
 * counted as dropped too.
 *
 * Live frames are queued and flushed once per event-loop turn (`setImmediate`), in one corked write,
 * or at once when the queue reaches the limit. Whether the socket takes more is judged by the bytes
 * still waiting in it, not by unfired write callbacks, so a burst to a client that reads is written,
 * not dropped.
 */
export class StreamConnection {
  private readonly queue: string[] = [];
  /** Data writes handed to the socket whose callback has not fired yet. */
  private inFlight = 0;
  /** Sizes of those writes, oldest first from `inFlightHead` (callbacks fire in write order). */
  private inFlightSizes: number[] = [];
  private inFlightHead = 0;
  private flushScheduled = false;
  private readonly cursor: Record<BacklogName, number> = { telemetry: 0, traces: 0, alerts: 0 };
  private readonly live: Record<BacklogName, boolean> = { telemetry: false, traces: false, alerts: false };
  private dropped = 0;
  private sent = 0;
  private paused = false;
  private closed = false;
  private controlInFlight = 0;
  private readonly unsubscribers: Array<() => void> = [];
  private readonly timers: NodeJS.Timeout[] = [];

  constructor(
    private readonly socket: StreamSocket,
    private readonly backlogs: Record<BacklogName, Backlog>,
    private readonly options: StreamOptions,
  ) {}

  start(): void {
    this.sendControl({
      type: 'hello',
      version: 'v1',
      stream: 'telemetry',
      contract: {
        resume_supported: true,
        max_pending_frames: this.options.maxPendingFrames,
        heartbeat_interval_ms: this.options.heartbeatIntervalMs,
        reconnect: 'send {"type":"resume","telemetry_offset":N,"trace_offset":N,"alert_offset":N}',
      },
    });
    for (const name of BACKLOG_NAMES) {
      // "Replay from offset 0" means everything the backlog still holds. Items evicted before this
      // client connected were never this connection's to drop: counting them would greet every
      // client of a long-running agent with a false `backpressure paused:true`.
      const ring = this.backlogs[name];
      const tail = this.options.tail;
      this.cursor[name] = tail === undefined ? ring.oldestOffset : Math.max(ring.oldestOffset, ring.headOffset - tail);
      this.unsubscribers.push(this.backlogs[name].onAppend((item, offset) => this.onAppend(name, item, offset)));
    }
    const hb = setInterval(() => this.sendControl(this.heartbeatFrame()), Math.min(this.options.heartbeatIntervalMs, MAX_TIMER_MS));
    hb.unref();
    this.timers.push(hb);
    if (this.options.streamSeconds > 0) this.scheduleEnd(Date.now() + this.options.streamSeconds * 1000);
    this.pump();
    this.flush();
  }

  /** Closes normally at `deadline`, re-arming in steps so a duration beyond the timer range is honoured. */
  private scheduleEnd(deadline: number): void {
    const remaining = deadline - Date.now();
    const end = setTimeout(() => {
      const at = this.timers.indexOf(end);
      if (at >= 0) this.timers.splice(at, 1);
      if (deadline - Date.now() > 0) this.scheduleEnd(deadline);
      else this.end(1000, 'stream duration reached');
    }, Math.min(Math.max(remaining, 0), MAX_TIMER_MS));
    end.unref();
    this.timers.push(end);
  }

  /** Handles one text message from the client; anything unrecognised is ignored. */
  receive(text: string): void {
    let msg: unknown;
    try {
      msg = JSON.parse(text);
    } catch {
      return;
    }
    if (!msg || typeof msg !== 'object') return;
    const m = msg as Record<string, unknown>;
    if (m['type'] === 'ping') this.sendControl({ type: 'pong' });
    else if (m['type'] === 'resume') this.resume(m);
  }

  private resume(m: Record<string, unknown>): void {
    const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.floor(v) : 0);
    this.cursor.telemetry = num(m['telemetry_offset']);
    this.cursor.traces = num(m['trace_offset']);
    this.cursor.alerts = num(m['alert_offset']);
    for (const name of BACKLOG_NAMES) this.live[name] = false;
    // Frames queued for the old positions would duplicate or reorder the replay.
    this.queue.length = 0;
    this.sendControl({
      type: 'resumed',
      telemetry_offset: this.cursor.telemetry,
      trace_offset: this.cursor.traces,
      alert_offset: this.cursor.alerts,
    });
    this.pump();
    this.flush();
  }

  stats(): StreamStats {
    return { pending_frames: this.pending(), dropped_frames: this.dropped, sent_frames: this.sent, paused: this.paused };
  }

  /** Stops timers and subscriptions; the socket is closed by its owner (or by `end`). */
  dispose(): void {
    if (this.closed) return;
    this.closed = true;
    for (const u of this.unsubscribers) u();
    for (const t of this.timers) clearTimeout(t);
    this.queue.length = 0;
  }

  private end(code: number, reason: string): void {
    this.dispose();
    this.socket.close(code, reason);
  }

  private pending(): number {
    return this.queue.length + this.waitingInSocket();
  }

  /**
   * Data frames handed to the socket whose bytes have not left the process. Bytes leave in write
   * order, so these are the newest writes covering `bufferedAmount` (control frames on the way are
   * counted as data: an overestimate, never an under-count).
   */
  private waitingInSocket(): number {
    if (!this.socket.bufferedAmount) return this.inFlight;
    let bytes = this.socket.bufferedAmount();
    let n = 0;
    for (let i = this.inFlightSizes.length - 1; bytes > 0 && i >= this.inFlightHead; i--) {
      bytes -= this.inFlightSizes[i]!;
      n++;
    }
    return n;
  }

  /** True while the socket should be handed another data frame. */
  private socketHasRoom(): boolean {
    if (!this.socket.bufferedAmount) return this.inFlight < MAX_IN_FLIGHT;
    return this.socket.bufferedAmount() < SOCKET_BUDGET_BYTES && this.waitingInSocket() < Math.max(1, this.options.maxPendingFrames >> 1);
  }

  private heartbeatFrame() {
    return {
      type: 'heartbeat',
      offsets: {
        telemetry: this.backlogs.telemetry.headOffset,
        traces: this.backlogs.traces.headOffset,
        alerts: this.backlogs.alerts.headOffset,
      },
      dropped_frames: this.dropped,
    };
  }

  private frame(name: BacklogName, item: unknown, offset: number): string | null {
    if (this.foreignTenant(item)) return null;
    const shape = FRAME_SHAPE[name];
    const backlog = this.backlogs[name];
    if (item === undefined || !backlog.json) return JSON.stringify({ type: shape.type, offset, [shape.key]: item });
    // Same text as the JSON.stringify above, with the item serialised once for every client.
    return `{"type":"${shape.type}","offset":${offset},"${shape.key}":${backlog.json(item as never)}}`;
  }

  /** True when the item or its `payload` names a tenant other than this instance's (either one suffices). */
  private foreignTenant(item: unknown): boolean {
    if (!item || typeof item !== 'object') return false;
    const o = item as Record<string, unknown>;
    const foreign = (tenant: unknown) => typeof tenant === 'string' && tenant !== this.options.tenantId;
    if (foreign(o['tenant_id'])) return true;
    const payload = o['payload'];
    return !!payload && typeof payload === 'object' && foreign((payload as Record<string, unknown>)['tenant_id']);
  }

  private onAppend(name: BacklogName, item: unknown, offset: number): void {
    if (this.closed) return;
    if (!this.live[name]) {
      this.pump();
      return;
    }
    if (offset > this.cursor[name]) this.countDropped(offset - this.cursor[name]);
    this.cursor[name] = offset + 1;
    const f = this.frame(name, item, offset);
    if (f === null) return;
    // A full queue is flushed at once when the socket has room: only a socket that is not taking
    // bytes makes us drop.
    if (this.pending() >= this.options.maxPendingFrames) this.flush();
    if (this.pending() >= this.options.maxPendingFrames) {
      if (this.queue.length > 0) {
        this.queue.shift();
        this.queue.push(f);
        // Announced after the swap, so `pending_frames` reports the (full) queue as it stands.
        this.countDropped(1);
        this.scheduleFlush();
      } else {
        // Every pending frame is already in the socket: the new one is the only one we can drop.
        this.countDropped(1);
      }
      return;
    }
    this.queue.push(f);
    this.scheduleFlush();
  }

  private countDropped(n: number): void {
    this.dropped += n;
    if (!this.paused) {
      this.paused = true;
      this.sendControl({ type: 'backpressure', paused: true, pending_frames: this.pending(), dropped_frames: this.dropped });
    }
  }

  /**
   * Pulls replay items into the queue while there is room, round-robin over the backlogs; a full
   * queue is flushed while the socket takes it, so a replay to a reading client is not paced by turns.
   */
  private pump(): void {
    let progressed = true;
    while (!this.closed && progressed) {
      if (this.pending() >= this.options.maxPendingFrames) {
        const queued = this.queue.length;
        this.flush();
        if (this.queue.length === queued || this.pending() >= this.options.maxPendingFrames) break;
      }
      progressed = false;
      for (const name of BACKLOG_NAMES) {
        if (this.live[name] || this.pending() >= this.options.maxPendingFrames) continue;
        const ring = this.backlogs[name];
        if (this.cursor[name] < ring.oldestOffset) {
          // The ring overwrote items this client never got.
          this.countDropped(ring.oldestOffset - this.cursor[name]);
          this.cursor[name] = ring.oldestOffset;
        }
        if (this.cursor[name] >= ring.headOffset) {
          this.live[name] = true;
          continue;
        }
        const offset = this.cursor[name]++;
        const f = this.frame(name, ring.at(offset), offset);
        if (f !== null) this.queue.push(f);
        progressed = true;
      }
    }
    if (this.queue.length > 0) this.scheduleFlush();
  }

  /** Flushes the queue on the next turn, so the frames of one turn go out in one write. */
  private scheduleFlush(): void {
    if (this.flushScheduled || this.closed) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      this.flush();
    });
  }

  /** Hands queued frames to the socket while it has room, corked, in order. */
  private flush(): void {
    while (!this.closed && this.queue.length > 0 && this.socketHasRoom()) {
      const before = this.queue.length;
      const writes = () => {
        while (!this.closed && this.queue.length > 0 && this.socketHasRoom()) this.write(this.queue.shift()!);
      };
      if (this.socket.batch) this.socket.batch(writes);
      else writes();
      if (this.queue.length === before) break;
    }
    this.checkUnpause();
  }

  private write(f: string): void {
    this.inFlight++;
    this.inFlightSizes.push(f.length);
    this.socket.send(f, (err) => this.written(err));
  }

  private written(err?: Error): void {
    this.inFlight--;
    this.inFlightHead++;
    if (this.inFlightHead >= 1024 && this.inFlightHead * 2 >= this.inFlightSizes.length) {
      this.inFlightSizes = this.inFlightSizes.slice(this.inFlightHead);
      this.inFlightHead = 0;
    }
    if (this.closed) return;
    if (err) {
      this.end(1011, 'write failed');
      return;
    }
    this.sent++;
    this.pump();
    this.flush();
  }

  private checkUnpause(): void {
    if (this.paused && this.pending() <= Math.floor(this.options.maxPendingFrames / 2)) {
      this.paused = false;
      this.sendControl({ type: 'backpressure', paused: false, pending_frames: this.pending(), dropped_frames: this.dropped });
    }
  }

  /**
   * Control frames bypass the queue and its cap, so they go out ahead of queued data frames. `hello`
   * and `backpressure` (bounded by the pause cycle) always go; the others are skipped while
   * `MAX_CONTROL_IN_FLIGHT` control writes are still unwritten (a client that is not reading).
   */
  private sendControl(frame: Record<string, unknown>): void {
    if (this.closed) return;
    const always = frame['type'] === 'hello' || frame['type'] === 'backpressure';
    if (!always && this.controlInFlight >= MAX_CONTROL_IN_FLIGHT) return;
    this.controlInFlight++;
    this.socket.send(JSON.stringify(frame), () => {
      this.controlInFlight--;
      // Bytes of this frame held back queued data frames (socket budget): let them follow.
      if (!this.closed && this.queue.length > 0) this.scheduleFlush();
    });
  }
}
