import { badRequest, tenantMismatch } from '../../core/errors.js';
import { isStreamed, STREAMED_EVENT_NAMES, streamEventName, type PlatformEvent, type PlatformEventName } from '../../events/platform-events.js';
import type { Services } from '../../runtime/services.js';
import type { TelemetryEvent, TelemetryKind } from '../../telemetry/telemetry-events.js';

/**
 * The server-streaming RPCs (StreamEvents, StreamTelemetry). Each subscriber has a bounded queue of
 * `SVC_WS_MAX_PENDING_FRAMES` items in front of the HTTP/2 stream (nice-grpc waits for `drain`, so the
 * queue only fills when the client reads slowly): when it is full the oldest item is dropped and
 * counted, and every frame carries the subscriber's running `dropped` count, the gRPC counterpart of
 * the WebSocket's `backpressure` frames (docs/wire-decisions.md D6). Items that name another tenant are never sent.
 */

export const TELEMETRY_KINDS: readonly TelemetryKind[] = ['device', 'sensor', 'heartbeat', 'device_heartbeat', 'health', 'session', 'runtime_metrics', 'platform'];

/** A bounded FIFO that drops its oldest item when full; iterated until the signal aborts. */
export class DropOldestQueue<T> {
  private items: T[] = [];
  private wake: (() => void) | null = null;
  dropped = 0;

  constructor(readonly capacity: number) {}

  push(item: T): void {
    if (this.items.length >= this.capacity) {
      this.items.shift();
      this.dropped++;
    }
    this.items.push(item);
    const w = this.wake;
    this.wake = null;
    w?.();
  }

  get size(): number {
    return this.items.length;
  }

  async *drain(signal: AbortSignal): AsyncGenerator<T> {
    const onAbort = () => {
      const w = this.wake;
      this.wake = null;
      w?.();
    };
    signal.addEventListener('abort', onAbort);
    try {
      while (!signal.aborted) {
        if (this.items.length > 0) {
          yield this.items.shift()!;
          continue;
        }
        await new Promise<void>((resolve) => {
          this.wake = resolve;
        });
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }
}

function checkTenant(requested: string, services: Services): void {
  if (requested !== '' && requested !== services.settings.tenantId) throw tenantMismatch();
}

function foreignTenant(item: Record<string, unknown>, tenantId: string): boolean {
  const foreign = (t: unknown) => typeof t === 'string' && t !== tenantId;
  if (foreign(item['tenant_id'])) return true;
  const payload = item['payload'];
  return !!payload && typeof payload === 'object' && foreign((payload as Record<string, unknown>)['tenant_id']);
}

const EVENT_BY_LOWER = new Map<string, PlatformEventName>(
  STREAMED_EVENT_NAMES.flatMap((n) => [
    [n.toLowerCase(), n],
    [streamEventName(n), n],
  ]),
);

/** `HealthChanged`, `health_changed` (or `svc.events.HealthChanged`) → `HealthChanged`; unknown or not streamed → 400. */
export function parseEventTypes(values: readonly string[]): Set<PlatformEventName> | null {
  const wanted = values.map((v) => v.trim()).filter(Boolean);
  if (wanted.length === 0) return null;
  const out = new Set<PlatformEventName>();
  for (const v of wanted) {
    const name = EVENT_BY_LOWER.get(v.replace(/^svc\.events\./, '').toLowerCase());
    if (!name) throw badRequest(`unknown event type '${v}'`);
    out.add(name);
  }
  return out;
}

export function parseTelemetryKinds(values: readonly string[]): Set<string> | null {
  const wanted = values.map((v) => v.trim()).filter(Boolean);
  if (wanted.length === 0) return null;
  for (const v of wanted) {
    if (!(TELEMETRY_KINDS as readonly string[]).includes(v)) throw badRequest(`unknown telemetry kind '${v}' (one of ${TELEMETRY_KINDS.join(', ')})`);
  }
  return new Set(wanted);
}

function idSet(values: readonly string[]): Set<string> | null {
  const ids = values.map((v) => v.trim()).filter(Boolean);
  return ids.length > 0 ? new Set(ids) : null;
}

export interface StreamEventsRequest {
  event_types: string[];
  device_ids: string[];
  tenant_id: string;
}

export interface PlatformEventFrame {
  type: string;
  stream_name: string;
  timestamp: string;
  source: string;
  entity_id: string;
  json: string;
  dropped: number;
}

function eventMatchesIds(e: PlatformEvent, ids: Set<string>): boolean {
  if (e.entity_id !== undefined && ids.has(e.entity_id)) return true;
  const p = e.payload;
  return (typeof p['device_id'] === 'string' && ids.has(p['device_id'])) || (typeof p['entity_id'] === 'string' && ids.has(p['entity_id']));
}

/** Validates the request (before the stream opens) and returns the frame source. */
export function openEventStream(request: StreamEventsRequest, services: Services): (signal: AbortSignal) => AsyncGenerator<PlatformEventFrame> {
  checkTenant(request.tenant_id, services);
  const types = parseEventTypes(request.event_types);
  const ids = idSet(request.device_ids);
  const tenantId = services.settings.tenantId;
  return async function* (signal) {
    const queue = new DropOldestQueue<PlatformEvent>(services.settings.ws.maxPendingFrames);
    const unsubscribe = services.bus.subscribe((e) => {
      if (!isStreamed(e.type)) return;
      if (types && !types.has(e.type)) return;
      if (ids && !eventMatchesIds(e, ids)) return;
      if (foreignTenant(e as unknown as Record<string, unknown>, tenantId)) return;
      queue.push(e);
    });
    try {
      for await (const e of queue.drain(signal)) {
        yield {
          type: e.type,
          stream_name: streamEventName(e.type),
          timestamp: e.timestamp,
          source: e.source,
          entity_id: e.entity_id ?? '',
          json: JSON.stringify(e),
          dropped: queue.dropped,
        };
      }
    } finally {
      unsubscribe();
    }
  };
}

export interface StreamTelemetryRequest {
  kinds: string[];
  device_ids: string[];
  tenant_id: string;
  replay: boolean;
  since_offset: number;
}

export interface TelemetryFrame {
  offset: number;
  kind: string;
  json: string;
  dropped: number;
}

function telemetryMatchesIds(e: TelemetryEvent, ids: Set<string>): boolean {
  const o = e as unknown as Record<string, unknown>;
  return ['device_id', 'target', 'entity_id', 'sensor_id'].some((k) => typeof o[k] === 'string' && ids.has(o[k] as string));
}

export function openTelemetryStream(request: StreamTelemetryRequest, services: Services): (signal: AbortSignal) => AsyncGenerator<TelemetryFrame> {
  checkTenant(request.tenant_id, services);
  const kinds = parseTelemetryKinds(request.kinds);
  const ids = idSet(request.device_ids);
  const tenantId = services.settings.tenantId;
  const ring = services.telemetry.ring;
  const wanted = (e: TelemetryEvent) =>
    (!kinds || kinds.has(e.kind)) && (!ids || telemetryMatchesIds(e, ids)) && !foreignTenant(e as unknown as Record<string, unknown>, tenantId);
  return async function* (signal) {
    const queue = new DropOldestQueue<{ offset: number; event: TelemetryEvent }>(services.settings.ws.maxPendingFrames);
    let live = false;
    let replayDropped = 0;
    const unsubscribe = ring.onAppend((event, offset) => {
      if (live && wanted(event)) queue.push({ offset, event });
    });
    const frame = (offset: number, event: TelemetryEvent): TelemetryFrame => ({
      offset,
      kind: event.kind,
      json: JSON.stringify(event),
      dropped: replayDropped + queue.dropped,
    });
    try {
      // Replay pulls from the ring only as fast as the client reads; the switch to live happens in
      // the same tick as the last replayed offset, so nothing falls between the two.
      let cursor = request.replay ? request.since_offset : ring.headOffset;
      while (!signal.aborted) {
        if (cursor < ring.oldestOffset) {
          replayDropped += ring.oldestOffset - cursor;
          cursor = ring.oldestOffset;
        }
        if (cursor >= ring.headOffset) {
          live = true;
          break;
        }
        const offset = cursor++;
        const event = ring.at(offset);
        if (event && wanted(event)) yield frame(offset, event);
      }
      for await (const item of queue.drain(signal)) yield frame(item.offset, item.event);
    } finally {
      unsubscribe();
    }
  };
}
