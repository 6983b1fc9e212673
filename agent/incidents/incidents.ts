import path from 'node:path';
import { ApiError, badRequest, conflict, notFound } from '../core/errors.js';
import type { EventBus } from '../events/event-bus.js';
import { alertOf, type Alert } from '../observability/alerts.js';
import { JsonStore } from '../state/json-store.js';

export type IncidentSeverity = 'info' | 'warning' | 'critical';
export type IncidentStatus = 'open' | 'acknowledged' | 'resolved';

export interface Incident {
  id: string;
  title: string;
  description: string;
  severity: IncidentSeverity;
  status: IncidentStatus;
  source_alert_id?: string;
  created_at_ms: number;
  acknowledged_at_ms?: number;
  resolved_at_ms?: number;
  assignee?: string;
  pagerduty_dedup_key?: string;
}

export const INCIDENTS_FILE = 'control-center-incidents.json';
const RING = 200;

function pascal(type: string): string {
  return type
    .split('_')
    .map((p) => p.charAt(0).toUpperCase() + p.slice(1))
    .join('');
}

/**
 * SRE incidents (docs/events.md § Incidents): a persisted ring of 200. Every critical alert opens
 * one, unless an unresolved incident already tracks that alert: the service listens on the bus for
 * `AlertRaised`.
 */
export class IncidentService {
  private lastId = 0;
  private readonly createdListeners = new Set<(incident: Incident) => void>();

  private constructor(private readonly store: JsonStore<Incident[]>) {}

  static async open(stateDir: string, bus: EventBus): Promise<IncidentService> {
    const store = await JsonStore.open<Incident[]>(path.join(stateDir, INCIDENTS_FILE), {
      defaults: () => [],
      revive: (raw) => {
        if (!Array.isArray(raw)) throw new Error('expected an array of incidents');
        return raw as Incident[];
      },
    });
    const service = new IncidentService(store);
    bus.subscribe((e) => {
      const alert = alertOf(e);
      if (alert) service.fromAlert(alert);
    });
    return service;
  }

  private fromAlert(alert: Alert): Incident | null {
    if (alert.severity !== 'critical') return null;
    if (this.store.data.some((i) => i.source_alert_id === alert.id && i.status !== 'resolved')) return null;
    return this.create({
      title: `Alert: ${pascal(alert.alert_type)}`,
      description: alert.message,
      severity: 'critical',
      source_alert_id: alert.id,
    });
  }

  private nextId(now: number): string {
    const id = Math.max(now, this.lastId + 1);
    this.lastId = id;
    return `incident-${id}`;
  }

  create(input: { title: string; description?: string | undefined; severity?: string | undefined; source_alert_id?: string | undefined }): Incident {
    if (!input.title.trim()) throw badRequest('missing title');
    const now = Date.now();
    const severity: IncidentSeverity = input.severity === 'critical' || input.severity === 'info' ? input.severity : 'warning';
    const incident: Incident = {
      id: this.nextId(now),
      title: input.title,
      description: input.description ?? '',
      severity,
      status: 'open',
      created_at_ms: now,
      ...(input.source_alert_id ? { source_alert_id: input.source_alert_id, pagerduty_dedup_key: input.source_alert_id } : {}),
    };
    this.store.change((d) => {
      d.push(incident);
      if (d.length > RING) d.splice(0, d.length - RING);
    });
    for (const l of this.createdListeners) {
      try {
        l(incident);
      } catch {
        /* a listener's failure never fails the incident */
      }
    }
    return incident;
  }

  /** Called with every incident opened from now on (by an alert or the API); the autonomy memory indexes them. */
  onCreated(listener: (incident: Incident) => void): () => void {
    this.createdListeners.add(listener);
    return () => this.createdListeners.delete(listener);
  }

  list(): Incident[] {
    return this.store.data.slice();
  }

  get(id: string): Incident | undefined {
    return this.store.data.find((i) => i.id === id);
  }

  acknowledge(id: string, assignee?: string): Incident {
    const i = this.get(id);
    if (!i) throw notFound('incident not found');
    if (i.status === 'resolved') throw conflict('incident not found or already resolved');
    this.store.change(() => {
      i.status = 'acknowledged';
      i.acknowledged_at_ms = Date.now();
      if (assignee) i.assignee = assignee;
    });
    return i;
  }

  resolve(id: string): Incident {
    const i = this.get(id);
    if (!i) throw notFound('incident not found');
    if (i.status === 'resolved') throw conflict('incident not found or already resolved');
    this.store.change(() => {
      i.status = 'resolved';
      i.resolved_at_ms = Date.now();
    });
    return i;
  }

  /** The first incident whose id, PagerDuty dedup key or source alert id is `ref` (how PagerDuty names ours). */
  findByRef(ref: string): Incident | undefined {
    return this.store.data.find((i) => i.id === ref || i.pagerduty_dedup_key === ref || i.source_alert_id === ref);
  }

  /**
   * A change PagerDuty reports (docs/operations.md § Alerting, inbound webhook): `acknowledge`
   * replaces the assignee (clears it when PagerDuty names none) and is refused (409) once resolved;
   * `resolve` may repeat, refreshing `resolved_at_ms`, because PagerDuty re-sends resolutions.
   * An unknown reference is 400 `not_found` (the reference's status, with the D15 code).
   */
  applyPagerDuty(ref: string, action: 'acknowledge' | 'resolve', assignee: string | undefined, now = Date.now()): Incident {
    const i = this.findByRef(ref);
    if (!i) throw new ApiError(400, 'not_found', 'incident not found or already resolved');
    if (action === 'acknowledge' && i.status === 'resolved') throw conflict('incident not found or already resolved');
    this.store.change(() => {
      if (action === 'acknowledge') {
        i.status = 'acknowledged';
        i.acknowledged_at_ms = now;
        if (assignee) i.assignee = assignee;
        else delete i.assignee;
      } else {
        i.status = 'resolved';
        i.resolved_at_ms = now;
      }
    });
    return i;
  }

  flush(): Promise<void> {
    return this.store.flush();
  }
}
