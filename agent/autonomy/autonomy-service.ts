import path from 'node:path';
import { badRequest } from '../core/errors.js';
import type { DeviceRecord } from '../devices/device-registry.js';
import type { EntityService } from '../entities/entity-service.js';
import type { ProgramFacts } from '../entities/program-facts.js';
import type { Incident } from '../incidents/incidents.js';
import type { PlatformEvent } from '../events/platform-events.js';
import type { Alert } from '../observability/alerts.js';
import type { AutonomySettings } from '../settings/settings.js';
import type { TelemetryEvent } from '../telemetry/telemetry-events.js';
import { attention, names } from './attention.js';
import { fusion } from './fusion.js';
import { entityReports, evaluate, linkErrorPct, ProcessSampler } from './homeostasis.js';
import { immunityScan } from './immunity.js';
import { LiveReadings } from './live-readings.js';
import { findTraces, incidentOwner, memoryView, traceOwner } from './memory.js';
import { catalogExamples, reflexCatalogue, ReflexEvaluator, reflexesFromTrace } from './reflexes.js';
import { autonomyConfig, DEFAULT_SUPPRESSION, type AutonomyConfig, type SetPoint, type SuppressionRule } from './set-points.js';
import { EPISODIC_RING, REFLEX_TRACE_RING, RingFile, WindowStore, type EpisodicEntry, type MaintenanceWindow, type ReflexTrace } from './stores.js';

export interface AutonomyDeps {
  files: AutonomySettings;
  /** The resolved configuration tree (null without a project). */
  configTree: Record<string, unknown> | null;
  /** Where trace paths are shown relative to, and scanned from at start (null: no scan). */
  traceRoot: string | null;
  entities: EntityService;
  devices: () => readonly DeviceRecord[];
  linkStats: () => Array<Record<string, unknown>>;
  alerts: () => readonly Alert[];
  incidents: () => readonly Incident[];
  programFacts: () => ProgramFacts | null;
  warn: (m: string) => void;
  now?: () => number;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;
const SECURITY_EVENTS = new Set(['TamperDetected', 'SpoofingDetected']);
const RECOVERY_EVENTS = new Set(['RecoveryTriggered', 'RecoveryCompleted', 'RecoveryFailed']);

/**
 * Resilient autonomy (docs/autonomy.md): keeps the newest telemetry per device, evaluates reflex rules
 * on every reading as it arrives, indexes episodes (traces, incidents, recoveries) when they are
 * recorded, and computes the homeostasis, immunity, attention, fusion and memory views from live
 * state on request.
 */
export class AutonomyService {
  readonly readings = new LiveReadings();
  readonly config: AutonomyConfig;
  private readonly sampler = new ProcessSampler();
  private readonly reflexes: ReflexEvaluator;
  private readonly tamper = new Map<string, number>();
  private readonly spoofing = new Map<string, number>();
  private episodeSeq = 0;
  private scan: Promise<void> | null = null;

  private constructor(
    private readonly deps: AutonomyDeps,
    private readonly traceRing: RingFile<ReflexTrace>,
    private readonly episodic: RingFile<EpisodicEntry>,
    private readonly windows: WindowStore,
  ) {
    this.config = autonomyConfig(deps.configTree, deps.warn);
    this.reflexes = new ReflexEvaluator(() => this.config.reflex, (t) => this.traceRing.append(t));
  }

  static async open(deps: AutonomyDeps): Promise<AutonomyService> {
    const [traces, episodic, windows] = await Promise.all([
      RingFile.open<ReflexTrace>(deps.files.traceFile, REFLEX_TRACE_RING, 'reflex traces', (x) => typeof x['reflex_id'] === 'string' && typeof x['entity_id'] === 'string', deps.warn),
      RingFile.open<EpisodicEntry>(deps.files.episodicFile, EPISODIC_RING, 'episodic entries', (x) => typeof x['id'] === 'string' && typeof x['entity_id'] === 'string', deps.warn),
      WindowStore.open(deps.files.maintenanceFile, deps.warn),
    ]);
    return new AutonomyService(deps, traces, episodic, windows);
  }

  private now(): number {
    return this.deps.now?.() ?? Date.now();
  }

  // ----- inputs, fed by the module -----

  /** Restores the newest readings from what the telemetry store holds (no reflexes fire for history). */
  seed(events: readonly TelemetryEvent[]): void {
    for (const e of events) this.readings.ingest(e);
  }

  onTelemetry(e: TelemetryEvent): void {
    this.readings.ingest(e);
    this.reflexes.onTelemetry(e);
  }

  onEvent(e: PlatformEvent): void {
    const entity = e.entity_id ?? (typeof e.payload['entity_id'] === 'string' ? e.payload['entity_id'] : null);
    if (SECURITY_EVENTS.has(e.type) && entity) (e.type === 'TamperDetected' ? this.tamper : this.spoofing).set(entity, Date.parse(e.timestamp));
    if (RECOVERY_EVENTS.has(e.type)) {
      const id = typeof e.payload['plan_id'] === 'string' ? e.payload['plan_id'] : typeof e.payload['id'] === 'string' ? e.payload['id'] : `${e.type}-${Date.parse(e.timestamp)}`;
      this.addEpisode({ entity_id: entity ?? 'platform', artifact_kind: 'recovery', recovery_id: id, summary: `${e.type}${typeof e.payload['strategy'] === 'string' ? ` (${e.payload['strategy']})` : ''}`, timestamp: e.timestamp });
    }
  }

  onIncident(i: Incident): void {
    if (this.episodic.all().some((x) => x.artifact_kind === 'incident' && x.incident_id === i.id)) return;
    const ids = this.deps.entities.view().graph.list().map((e) => e.id);
    this.addEpisode({ entity_id: incidentOwner(i, ids, names), artifact_kind: 'incident', incident_id: i.id, summary: i.title, timestamp: new Date(i.created_at_ms).toISOString() });
  }

  /**
   * Indexes one trace file: at record time (a simulation of this agent wrote it; its reflex firings
   * are recorded as reflex traces too) or found by the start-up scan (indexed once, by path).
   */
  onTrace(absolutePath: string, options: { scanned?: boolean } = {}): void {
    const rel = this.deps.traceRoot ? path.relative(this.deps.traceRoot, absolutePath).split(path.sep).join('/') : absolutePath;
    if (options.scanned && this.episodic.all().some((x) => x.replay_path === rel)) return;
    const view = this.deps.entities.view();
    const { owner, frames } = traceOwner(absolutePath, (id) => view.graph.get(id) !== undefined);
    const now = this.now();
    this.addEpisode({ entity_id: owner, artifact_kind: 'replay', replay_path: rel, trace_id: `trace:${path.basename(absolutePath, '.trace')}`, timestamp: new Date(now).toISOString() });
    if (!options.scanned) for (const t of reflexesFromTrace(frames, reflexCatalogue(this.deps.programFacts()), rel, now)) this.traceRing.append(t);
  }

  /** The start-up scan: traces under the project root not yet indexed, and incidents opened while the agent was down. */
  startupIndex(): Promise<void> {
    this.scan ??= new Promise<void>((resolve) => {
      setImmediate(() => {
        try {
          for (const i of this.deps.incidents()) this.onIncident(i);
          if (this.deps.traceRoot) for (const t of findTraces(this.deps.traceRoot)) this.onTrace(t, { scanned: true });
        } catch (err) {
          this.deps.warn(`autonomy memory start-up index: ${(err as Error).message}`);
        }
        resolve();
      });
    });
    return this.scan;
  }

  private addEpisode(e: Omit<EpisodicEntry, 'id' | 'category'>): void {
    const ms = this.now();
    this.episodic.append({ id: `ep-${ms}-${++this.episodeSeq}`, category: 'episodic', ...e });
  }

  // ----- views -----

  reflexList() {
    return { reflexes: reflexCatalogue(this.deps.programFacts()) };
  }

  reflexTraces() {
    const traces = [...this.traceRing.all()];
    if (traces.length > 0) return { traces, source: 'runtime' as const, catalog_examples: [] };
    const first = this.deps.entities.view().graph.list().map((e) => e.id).sort()[0] ?? 'platform';
    return { traces: [], source: 'none' as const, catalog_examples: catalogExamples(first, this.now()) };
  }

  private deviceMap(): Map<string, DeviceRecord> {
    return new Map(this.deps.devices().map((d) => [d.id, d]));
  }

  /**
   * The set points in force: when the loaded program declares homeostasis metrics, exactly those
   * (each with its configured or default range, `0..100` warn 0.8 for an unknown name); otherwise
   * every configured and default one.
   */
  private setPoints(): { setPoints: Record<string, SetPoint>; source: string } {
    const declared = this.deps.programFacts()?.homeostasisMetrics ?? [];
    if (declared.length === 0) return { setPoints: this.config.setPoints, source: this.config.setPointSource };
    return { setPoints: Object.fromEntries(declared.map((n) => [n, this.config.setPoints[n] ?? { min: 0, max: 100, warn: 0.8, unit: '' }])), source: 'program' };
  }

  /**
   * Attention policy: the program's attention rules when it declares any (`boost_critical_health` →
   * critical first on equal scores, `suppress_low_priority` → the routine rule, any other name → a
   * rule on that label, 5 repeats per 120 s), plus configured rules; else the configured or default rules.
   */
  private attentionPolicy(): { rules: SuppressionRule[]; criticalFirst: boolean; source: string } {
    const declared = this.deps.programFacts()?.attentionRules ?? [];
    if (declared.length === 0) return { rules: this.config.suppression, criticalFirst: true, source: this.config.suppressionSource };
    const rules: SuppressionRule[] = [];
    for (const name of declared) {
      if (name === 'boost_critical_health') continue;
      rules.push(name === 'suppress_low_priority' ? { ...DEFAULT_SUPPRESSION[0]! } : { pattern: name, max_repeats: 5, window_secs: 120 });
    }
    if (this.config.suppressionSource === 'config') rules.push(...this.config.suppression);
    return { rules, criticalFirst: declared.includes('boost_critical_health'), source: 'program' };
  }

  homeostasis() {
    const now = this.now();
    const { setPoints, source } = this.setPoints();
    const platformMetrics = this.sampler.sample();
    const platform = evaluate(platformMetrics, setPoints);
    const linkErrors = new Map<string, { pct: number; target: string }>();
    for (const s of this.deps.linkStats()) {
      const pct = linkErrorPct(s);
      if (pct === null) continue;
      for (const d of Array.isArray(s['devices']) ? (s['devices'] as unknown[]) : []) if (typeof d === 'string') linkErrors.set(d, { pct, target: String(s['target'] ?? s['transport']) });
    }
    const reports = entityReports({ view: this.deps.entities.view(), devices: this.deviceMap(), readings: this.readings, linkErrors, setPoints, now });
    return {
      policy_source: source,
      set_points: setPoints,
      platform: { entity_id: 'platform', stable: platform.drift.length === 0, metrics: platformMetrics, drift_signals: platform.drift, corrections: platform.corrections },
      reports,
      truncated: false,
    };
  }

  immunity() {
    return { quarantined: immunityScan(this.deps.entities.view(), this.deviceMap(), { tamper: this.tamper, spoofing: this.spoofing }) };
  }

  attention() {
    const policy = this.attentionPolicy();
    return {
      policy_source: policy.source,
      suppression_rules: policy.rules,
      critical_first: policy.criticalFirst,
      attention: attention({ view: this.deps.entities.view(), alerts: this.deps.alerts(), incidents: this.deps.incidents(), healthChanged: this.readings.health, rules: policy.rules, criticalFirst: policy.criticalFirst, now: this.now() }),
    };
  }

  fusion() {
    const view = this.deps.entities.view();
    const trusted = (d: DeviceRecord) => {
      if (d.trust_level === 'trusted' || d.trust_level === 'verified') return true;
      const t = view.graph.get(d.id) ? view.status.status(d.id).trust_status : null;
      return t === 'trusted' || t === 'verified';
    };
    const entries = fusion(this.deps.devices(), this.readings, trusted, this.now(), this.deps.files.liveFusionSensors);
    return { policy: 'staleness_weighted', entities_evaluated: entries.length, fusion: entries };
  }

  memory() {
    const recovery = (this.deps.configTree?.['recovery'] ?? {}) as Record<string, unknown>;
    const playbooks = (Array.isArray(recovery['playbooks']) ? recovery['playbooks'] : [])
      .filter((p): p is Record<string, unknown> => !!p && typeof p === 'object' && typeof (p as Record<string, unknown>)['name'] === 'string')
      .map((p) => ({ name: p['name'] as string, entity_kinds: Array.isArray(p['entity_kinds']) ? (p['entity_kinds'] as unknown[]).filter((k): k is string => typeof k === 'string') : [] }));
    const facts = this.deps.programFacts();
    return memoryView({ view: this.deps.entities.view(), facts, catalogue: reflexCatalogue(facts), traces: this.traceRing.all(), episodic: this.episodic.all(), playbooks });
  }

  listWindows() {
    return { windows: this.windows.list() };
  }

  putWindow(w: MaintenanceWindow) {
    for (const f of ['start', 'end'] as const) if (!RFC3339.test(w[f]) || Number.isNaN(Date.parse(w[f]))) throw badRequest(`${f} must be an RFC 3339 date-time, got '${w[f]}'`);
    if (Date.parse(w.start) >= Date.parse(w.end)) throw badRequest(`start ${w.start} must be before end ${w.end}`);
    return { window: this.windows.upsert({ id: w.id, start: w.start, end: w.end, activities: [...w.activities] }) };
  }

  async close(): Promise<void> {
    this.sampler.close();
    await this.scan;
    await Promise.all([this.traceRing.flush(), this.episodic.flush(), this.windows.flush()]);
  }
}
