import path from 'node:path';
import type { EventBus } from '../events/event-bus.js';
import { platformEvent, type PlatformEvent } from '../events/platform-events.js';
import { PersistentRing } from './persistent-ring.js';

export const ALERT_TYPES = [
  'mission_failure',
  'robot_offline',
  'crash',
  'reboot',
  'memory_leak',
  'tamper',
  'security',
  'low_battery',
  'health_critical',
  'readiness_failed',
  'recovery_failed',
  'config_drift',
  'custom',
] as const;
export type AlertType = (typeof ALERT_TYPES)[number];
export type AlertSeverity = 'info' | 'warning' | 'critical';

export interface Alert {
  id: string;
  alert_type: AlertType;
  severity: AlertSeverity;
  message: string;
  source: string;
  timestamp_ms: number;
  delivered_via: string[];
}

export interface AlertInput {
  alert_type: AlertType;
  severity: AlertSeverity;
  message: string;
  source: string;
  id?: string;
}

export const ALERTS_FILE = 'control-center-alerts.json';

export const ALERT_EVENT_SOURCE = 'svc-alerts';

/** The `AlertRaised` platform event of a stored alert. */
export function alertRaisedEvent(alert: Alert): PlatformEvent {
  return platformEvent('AlertRaised', ALERT_EVENT_SOURCE, { alert });
}

/** The alert an `AlertRaised` event carries; null for any other event. */
export function alertOf(event: PlatformEvent): Alert | null {
  return event.type === 'AlertRaised' ? (event.payload['alert'] as Alert) : null;
}

/**
 * Delivers stored alerts to the configured channels (`agent/alerting`). `dispatch` runs inside
 * `raise()` before the alert is stored: it returns what it delivered at once (the log line) and
 * starts the outbound deliveries without waiting for them, so the code that raised the alert is never
 * held up by a slow receiver. Each later success is reported through `delivered`.
 */
export interface AlertDispatcher {
  dispatch(alert: Alert, delivered: (via: string) => void): string[];
}

/** Until the alerting module installs the channel dispatcher: the agent log only. */
export function logOnlyDispatcher(log: (line: string) => void): AlertDispatcher {
  return {
    dispatch(alert) {
      log(alertLogLine(alert));
      return ['log'];
    },
  };
}

/** The log channel's line: severity, type, source and message. */
export function alertLogLine(alert: Alert): string {
  return `alert [${alert.severity}] ${alert.alert_type} from ${alert.source}: ${alert.message}`;
}

/**
 * The alert pipeline (docs/events.md § Alerts): de-duplicate within a per-severity window, deliver,
 * store in a persisted ring (the stream's `alert` frames), then publish `AlertRaised` on the bus,
 * where listeners (incidents) hear every stored alert. Code that detects a condition calls `raise()`,
 * so de-duplication stays here.
 */
export class AlertService {
  private lastId = 0;
  private dispatcher: AlertDispatcher;

  private constructor(
    readonly ring: PersistentRing<Alert>,
    private readonly dedupSecs: Record<AlertSeverity, number>,
    private readonly bus: EventBus,
    log: (line: string) => void,
  ) {
    this.dispatcher = logOnlyDispatcher(log);
  }

  /** Installs the channel dispatcher (the alerting module at start); `raise()` stays the single entry point. */
  setDispatcher(dispatcher: AlertDispatcher): void {
    this.dispatcher = dispatcher;
  }

  static async open(
    stateDir: string,
    capacity: number,
    dedupSecs: Record<AlertSeverity, number>,
    bus: EventBus,
    log: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
  ): Promise<AlertService> {
    const ring = await PersistentRing.open<Alert>(path.join(stateDir, ALERTS_FILE), capacity);
    return new AlertService(ring, dedupSecs, bus, log);
  }

  /** Raises an alert; returns it, or null when it duplicates one inside the dedup window. */
  raise(input: AlertInput, now = Date.now(), options: { dedup?: boolean } = {}): Alert | null {
    const windowMs = options.dedup === false ? 0 : this.dedupSecs[input.severity] * 1000;
    if (windowMs > 0) {
      const duplicate = this.ring
        .latest()
        .some(
          (a) =>
            a.alert_type === input.alert_type &&
            a.severity === input.severity &&
            a.source === input.source &&
            a.message === input.message &&
            now - a.timestamp_ms < windowMs,
        );
      if (duplicate) return null;
    }
    const alert: Alert = {
      id: input.id ?? this.nextId(input.alert_type, now),
      alert_type: input.alert_type,
      severity: input.severity,
      message: input.message,
      source: input.source,
      timestamp_ms: now,
      delivered_via: [],
    };
    // Deliveries that finish later are added to the stored alert (and persisted) as they succeed;
    // a channel that never accepts the alert never appears here (docs/operations.md § Alerting).
    alert.delivered_via = this.dispatcher.dispatch(alert, (via) => this.markDelivered(alert, via));
    this.ring.append(alert);
    this.bus.publish(alertRaisedEvent(alert));
    return alert;
  }

  private markDelivered(alert: Alert, via: string): void {
    if (alert.delivered_via.includes(via)) return;
    alert.delivered_via.push(via);
    this.ring.touched();
  }

  /** A stored alert by id (the newest with that id). */
  get(id: string): Alert | undefined {
    const all = this.ring.all();
    for (let i = all.length - 1; i >= 0; i--) if (all[i]!.id === id) return all[i];
    return undefined;
  }

  private nextId(type: AlertType, now: number): string {
    // Unique even for several alerts in one millisecond.
    const id = Math.max(now, this.lastId + 1);
    this.lastId = id;
    return `${type.replace(/_/g, '-')}-${id}`;
  }

  list(): Alert[] {
    return this.ring.all();
  }

  get count(): number {
    return this.ring.size;
  }

  close(): Promise<void> {
    return this.ring.close();
  }
}
