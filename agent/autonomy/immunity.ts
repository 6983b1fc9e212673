import type { DeviceRecord } from '../devices/device-registry.js';
import type { RegistryView } from '../entities/entity-service.js';
import { byId } from './order.js';

export type ImmunityAction = 'monitor' | 'isolate' | 'remove_from_mission' | 'block';

interface ImmuneEvent {
  kind: 'quarantine' | 'isolate' | 'block';
  reason: string;
}

export interface QuarantineDecision {
  entity_id: string;
  kind: string;
  quarantine: true;
  action: ImmunityAction;
  reasons: string[];
}

/** Tamper and spoofing events heard on the bus since the agent started, per entity. */
export interface SecuritySignals {
  tamper: ReadonlyMap<string, number>;
  spoofing: ReadonlyMap<string, number>;
}

/**
 * The immunity scan (docs/autonomy.md § Immunity): per entity, in id order, the signals that call for
 * a quarantine: the registry's trust verdict, the entity's `tamper.detected`,
 * `sensor.spoofing_detected` and `plugin.unsigned` metadata, the device pool's `trust_level`, and
 * `TamperDetected` / `SpoofingDetected` events seen for it. Only entities to quarantine are listed.
 */
export function immunityScan(view: RegistryView, devices: ReadonlyMap<string, DeviceRecord>, signals: SecuritySignals): QuarantineDecision[] {
  const out: QuarantineDecision[] = [];
  for (const e of [...view.graph.list()].sort(byId)) {
    const events: ImmuneEvent[] = [];
    const tampered = e.metadata['tamper.detected'] === 'true' || signals.tamper.has(e.id);
    const spoofed = e.metadata['sensor.spoofing_detected'] === 'true' || signals.spoofing.has(e.id);
    const device = devices.get(e.id);
    // Tamper makes the entity compromised, spoofing untrusted (digest §3.1 enrichment), whatever the registry says.
    let trust: string = view.status.status(e.id).trust_status;
    if (tampered) trust = 'compromised';
    else if (spoofed || device?.trust_level === 'untrusted') trust = 'untrusted';
    if (trust === 'untrusted') events.push({ kind: 'quarantine', reason: 'Entity trust status is untrusted' });
    if (trust === 'compromised') events.push({ kind: 'isolate', reason: 'Entity trust is compromised' });
    if (tampered && signals.tamper.has(e.id)) events.push({ kind: 'isolate', reason: 'TamperDetected event received' });
    if (e.metadata['plugin.unsigned'] === 'true') events.push({ kind: 'block', reason: 'Unsigned plugin detected' });
    if (spoofed) events.push({ kind: 'quarantine', reason: signals.spoofing.has(e.id) && e.metadata['sensor.spoofing_detected'] !== 'true' ? 'SpoofingDetected event received' : 'Sensor spoofing signal rejected' });
    if (events.length === 0) continue;
    const action: ImmunityAction = events.some((x) => x.kind === 'isolate') ? 'remove_from_mission' : events.some((x) => x.kind === 'block') ? 'block' : 'isolate';
    out.push({ entity_id: e.id, kind: e.kind, quarantine: true, action, reasons: events.map((x) => x.reason) });
  }
  return out;
}
