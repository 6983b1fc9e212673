import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { API_VERSION } from '../../api/versions.js';
import type { ConfigControlService } from '../config-control/config-control-service.js';
import type { SnapshotResolved } from '../config-control/snapshot-model.js';
import type { Lazy } from '../core/lazy.js';
import { badRequest } from '../core/errors.js';
import type { AlertService } from '../observability/alerts.js';
import { DeployAgentRegistry } from '../operator/deploy-agents.js';
import { FleetAgentRegistry } from '../operator/fleet-agents.js';
import type { OutboundHttp } from '../outbound/outbound-http.js';
import type { ProjectContext } from '../project/project-context.js';
import type { Program } from '../programs/language/ast.js';
import { loadProgram } from '../programs/program-files.js';
import type { DriftSettings } from '../settings/settings.js';
import { JsonStore } from '../state/json-store.js';
import { agentFindings, expectedAgentStates, type AgentStatus } from './agent-drift.js';
import { configDrift } from './config-drift.js';
import { buildReport, rank, ROLLUP_DIMENSIONS, type DriftReport, type RollupDimension } from './drift-model.js';

export const DRIFT_SCANS_FILE = 'control-center-drift-scans.json';
export const MAX_SCANS = 200;

export interface DriftScanRecord {
  id: string;
  scanned_at_ms: number;
  baseline_id: string;
  passed: boolean;
  finding_count: number;
  dimensions_checked: RollupDimension[];
  by_dimension: DriftReport['by_dimension'];
  triggered_alert: boolean;
  /** Additive: the alert was submitted but the pipeline dropped it as a duplicate. */
  alert_deduplicated: boolean;
  source: 'api' | 'scheduled';
}

interface ScansFile {
  scans: DriftScanRecord[];
  max_entries: number;
}

export interface DriftDeps {
  settings: DriftSettings;
  stateDir: string;
  deployAgentsFile: string;
  project: ProjectContext;
  configControl: Lazy<ConfigControlService>;
  outbound: OutboundHttp;
  alerts: AlertService;
}

const NO_CONFIG = 'no resolved configuration; use --config';

/**
 * Operational drift (docs/operations.md § Drift): reports between a baseline snapshot and the live
 * configuration, program and agents; scans that record the result in a persisted ring of 200 and
 * raise a `config_drift` alert when drift is significant. Nothing is locked while agents are asked
 * for their status: the inputs are copied first, the answers applied after.
 */
export class DriftService {
  private lastScanMs = 0;
  private lastAlertMs = 0;

  private constructor(
    private readonly deps: DriftDeps,
    private readonly store: JsonStore<ScansFile>,
  ) {}

  static async open(deps: DriftDeps): Promise<DriftService> {
    const store = await JsonStore.open<ScansFile>(path.join(deps.stateDir, DRIFT_SCANS_FILE), {
      defaults: () => ({ scans: [], max_entries: MAX_SCANS }),
      revive: (raw) => {
        const r = raw as Partial<ScansFile>;
        if (!r || !Array.isArray(r.scans)) throw new Error('expected {scans:[...]}');
        return { scans: r.scans.slice(-MAX_SCANS), max_entries: MAX_SCANS };
      },
    });
    return new DriftService(deps, store);
  }

  /** `GET /v1/drift`: a report only; nothing recorded, no alert. */
  async detect(baselineId: string | undefined) {
    const cc = await this.deps.configControl.get();
    const current = cc.current();
    if (!current) throw badRequest(NO_CONFIG);
    if (baselineId === undefined || baselineId.trim() === '') throw badRequest('missing baseline_id query parameter');
    const baseline = cc.loadSnapshot(baselineId.trim());
    const { report, agentFindingCount } = await this.compute(baseline.resolved, current);
    return { version: API_VERSION, report, agent_findings: agentFindingCount };
  }

  /** `POST /v1/drift/scan` and the scheduler: compute, alert when it failed, record. */
  async scan(options: { baselineId?: string | undefined; source: 'api' | 'scheduled' }) {
    const cc = await this.deps.configControl.get();
    const current = cc.current();
    if (!current) throw badRequest(NO_CONFIG);
    const explicit = options.baselineId?.trim() ? options.baselineId.trim() : null;
    const baselineId = explicit ?? this.deps.settings.scanBaselineId ?? cc.newestSnapshot()?.id ?? null;
    if (baselineId === null) throw badRequest('no configuration snapshots; save one via POST /v1/config/snapshots');
    const baseline = cc.loadSnapshot(baselineId);
    const { report } = await this.compute(baseline.resolved, current);
    const now = Date.now();
    let triggered = false;
    let deduplicated = false;
    if (!report.passed) {
      const severity = report.findings.some((f) => rank(f.severity) >= rank('high')) ? 'critical' : 'warning';
      const alert = this.deps.alerts.raise({
        id: `drift-${(this.lastAlertMs = Math.max(now, this.lastAlertMs + 1))}`,
        alert_type: 'config_drift',
        severity,
        source: 'drift-scan',
        message: `operational drift detected (baseline ${baselineId}): ${report.findings.length} findings across ${ROLLUP_DIMENSIONS.length} dimensions`,
      });
      triggered = true;
      deduplicated = alert === null;
    }
    const ms = Math.max(now, this.lastScanMs + 1);
    this.lastScanMs = ms;
    const scan: DriftScanRecord = {
      id: `drift-scan-${ms}`,
      scanned_at_ms: now,
      baseline_id: baselineId,
      passed: report.passed,
      finding_count: report.findings.length,
      dimensions_checked: report.dimensions_checked,
      by_dimension: report.by_dimension,
      triggered_alert: triggered,
      alert_deduplicated: deduplicated,
      source: options.source,
    };
    this.store.change((d) => {
      d.scans.push(scan);
      if (d.scans.length > MAX_SCANS) d.scans.splice(0, d.scans.length - MAX_SCANS);
      d.max_entries = MAX_SCANS;
    });
    return { version: API_VERSION, ok: true, scan, report };
  }

  scans() {
    return { version: API_VERSION, scans: [...this.store.data.scans] };
  }

  /** The whole report: configuration checks, then (with a program) the agents' status. */
  private async compute(base: SnapshotResolved, current: SnapshotResolved): Promise<{ report: DriftReport; agentFindingCount: number }> {
    const loaded = this.loadProgram();
    const findings = configDrift(base, current, loaded?.program ?? null);
    let agentFindingCount = 0;
    if (loaded) {
      const agents = await this.agentDrift(loaded.program, loaded.hash, current);
      agentFindingCount = agents.length;
      findings.push(...agents);
    }
    return { report: buildReport(findings), agentFindingCount };
  }

  private loadProgram(): { program: Program; hash: string } | null {
    const file = this.deps.project.programPath;
    if (!file) return null;
    let bytes: Buffer;
    try {
      bytes = fs.readFileSync(file);
    } catch (err) {
      throw badRequest(`read ${path.basename(file)} failed: ${(err as Error).message}`);
    }
    return { program: loadProgram(file), hash: createHash('sha256').update(bytes).digest('hex') };
  }

  private async agentDrift(program: Program, hash: string, current: SnapshotResolved) {
    const deploy = new DeployAgentRegistry(this.deps.deployAgentsFile).stored();
    const fleet = new FleetAgentRegistry(this.deps.stateDir).stored();
    const expected = expectedAgentStates(program, hash, current);
    const answers = await Promise.all(
      expected.map(async (state) => {
        const agent = deploy.find((a) => a.target === state.key) ?? fleet.find((a) => a.robot_name === state.robot);
        if (!agent) return [];
        try {
          const status = await this.deps.outbound.getJson<AgentStatus>(`${agent.url.replace(/\/+$/, '')}/v1/status`, { bearer: agent.token ?? null });
          return status && typeof status === 'object' ? agentFindings(state, status) : [];
        } catch {
          // An unreachable agent contributes nothing (docs/operations.md § Drift).
          return [];
        }
      }),
    );
    return answers.flat();
  }

  async close(): Promise<void> {
    await this.store.close();
  }
}
