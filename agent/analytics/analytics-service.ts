/**
 * Program analytics (docs/analytics.md): the ten `/v1/analytics/*` reads. Loaded lazily
 * (agent/core/lazy.ts): the analyses are heavy and nothing happens at start. Every request parses the
 * loaded program afresh (cached while the file is unchanged) and computes; nothing is persisted. The
 * readiness history is the agent's own recorded readiness samples (agent/sre, one every
 * `SVC_SRE_SAMPLE_INTERVAL_SECS`), plus the CLI's `svc readiness --record` file.
 */
import fs from 'node:fs';
import path from 'node:path';
import { API_VERSION } from '../../api/versions.js';
import type {
  AnalyticsCertificationQuery,
  AnalyticsForecastQuery,
  AnalyticsGovernanceQuery,
  AnalyticsReadinessQuery,
  AnalyticsTimeTravelQuery,
  AnalyticsTrustGraphQuery,
  AnalyticsWhatIfQuery,
} from '../../api/domains/analytics.js';
import { badRequest } from '../core/errors.js';
import type { Lazy } from '../core/lazy.js';
import type { DeviceRegistry } from '../devices/device-registry.js';
import type { AlertService } from '../observability/alerts.js';
import type { RecoveryService } from '../recovery/recovery-service.js';
import type { SreService } from '../sre/sre-service.js';
import type { ProjectContext } from '../project/project-context.js';
import { projectRelative } from '../project/project-context.js';
import { NO_PROGRAM_MESSAGE, servedProgram } from '../programs/program-files.js';
import { RECOVERY_KNOWLEDGE_FILE } from '../programs/program-engine.js';
import {
  certificationPack,
  compositeTrust,
  defaultScenarios,
  missionRisk,
  missionTwin,
  readinessAnalytics,
  readinessForecast,
  whatIf,
  type AnalyticsInput,
  type FailureRecords,
  type TrendSource,
} from './analyses.js';
import { governanceCheck, graphFormat, humanTeaming, renderGraph, trustGraph } from './program-graphs.js';
import { loadTraceFile, parseAt, parseInspect, resolveTrace, timeTravel } from './time-travel.js';

export { NO_PROGRAM_MESSAGE };
const DAY_MS = 86_400_000;
/** Failure records older than this do not count toward what-if priors. */
export const PRIOR_WINDOW_MS = 30 * DAY_MS;
export const MAX_HORIZON_DAYS = 3650;

export interface AnalyticsDeps {
  project: ProjectContext;
  sre: SreService;
  devices: DeviceRegistry;
  alerts: AlertService;
  recovery: Lazy<RecoveryService>;
  stateDir: string;
  now?: () => number;
}

/** A positive whole number of days: `7`, `7d`; anything else is a 400 naming the parameter. */
export function parseDays(name: string, raw: string): number {
  const m = /^\s*(\d{1,5})\s*d?\s*$/i.exec(raw);
  const n = m ? Number(m[1]) : NaN;
  if (!Number.isInteger(n) || n < 1 || n > MAX_HORIZON_DAYS) throw badRequest(`${name} must be a whole number of days between 1 and ${MAX_HORIZON_DAYS} (e.g. 7 or 7d), got '${raw}'`);
  return n;
}

/** `1|true|yes` → true, `0|false|no` or absent → false; anything else is a 400. */
export function parseFlag(name: string, raw: string | undefined): boolean {
  if (raw === undefined || raw === '') return false;
  const v = raw.trim().toLowerCase();
  if (v === '1' || v === 'true' || v === 'yes') return true;
  if (v === '0' || v === 'false' || v === 'no') return false;
  throw badRequest(`${name} must be 1, true, 0 or false, got '${raw}'`);
}

export class AnalyticsService {
  private readonly now: () => number;

  constructor(private readonly deps: AnalyticsDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** The server's `--program`, parsed now; the errors of docs/analytics.md § Errors. */
  private input(): AnalyticsInput {
    const { program, file, label } = servedProgram(this.deps.project);
    return {
      program,
      label,
      file,
      config: this.deps.project.config,
      projectRoot: this.deps.project.projectRoot,
      stateDir: this.deps.stateDir,
      knowledgePath: path.join(this.deps.stateDir, RECOVERY_KNOWLEDGE_FILE),
    };
  }


  private head(input: AnalyticsInput) {
    return { version: API_VERSION, program: input.label };
  }

  private trends: TrendSource = (horizonDays) => this.deps.sre.readinessTrends({ horizonDays, minimumScore: 80 });

  /**
   * Failure records of the last 30 days for what-if priors: critical alerts (type and message) and
   * recovery evidence (root cause and strategy), each as lower-case text.
   */
  private async failureRecords(): Promise<FailureRecords> {
    const since = this.now() - PRIOR_WINDOW_MS;
    const alerts = this.deps.alerts
      .list()
      .filter((a) => a.severity === 'critical' && a.timestamp_ms >= since)
      .map((a) => `${a.alert_type} ${a.message}`.toLowerCase());
    let evidence: string[] = [];
    try {
      const history = (await this.deps.recovery.get()).history().history;
      evidence = history
        .filter((e) => {
          const at = Date.parse(e.timeline[e.timeline.length - 1]?.timestamp ?? '');
          return Number.isNaN(at) || at >= since;
        })
        .map((e) => `${e.root_cause} ${e.strategy}`.toLowerCase());
    } catch {
      evidence = [];
    }
    return [...alerts, ...evidence];
  }

  readiness(query: AnalyticsReadinessQuery) {
    const input = this.input();
    const days = query.forecast_days === undefined ? null : parseDays('forecast_days', query.forecast_days);
    const trend = this.trends(days ?? 7)!;
    return { ...this.head(input), analytics: readinessAnalytics(input.label, trend, days) };
  }

  readinessForecast(query: AnalyticsForecastQuery) {
    const input = this.input();
    const horizons = parseFlag('all', query.all) ? [7, 14, 30] : [query.horizon === undefined ? 7 : parseDays('horizon', query.horizon)];
    return { ...this.head(input), readiness_forecast: readinessForecast(input, horizons, this.trends) };
  }

  async whatIf(query: AnalyticsWhatIfQuery) {
    const input = this.input();
    const all = parseFlag('all', query.all);
    const scenario = query.scenario?.trim();
    if (scenario !== undefined && !all && scenario === '') throw badRequest('scenario must not be empty');
    const labels = all || scenario === undefined ? defaultScenarios(input.program) : [scenario];
    return { ...this.head(input), what_if: whatIf(input, labels, await this.failureRecords()) };
  }

  async missionRisk() {
    const input = this.input();
    return { ...this.head(input), mission_risk: missionRisk(input, await this.failureRecords()) };
  }

  trustGraph(query: AnalyticsTrustGraphQuery) {
    const input = this.input();
    const format = graphFormat(query.format);
    const devices = this.deps.devices.list().map((d) => ({ id: d.id, trust_level: d.trust_level }));
    const graph = trustGraph(input, compositeTrust(input), devices);
    if (format === 'json') return { ...this.head(input), trust_graph: graph };
    return { ...this.head(input), format, body: renderGraph(graph, format) };
  }

  missionTwin() {
    const input = this.input();
    return { ...this.head(input), mission_twin: missionTwin(input, this.trends) };
  }

  certificationPack(query: AnalyticsCertificationQuery) {
    const input = this.input();
    return { ...this.head(input), certification_pack: certificationPack(input, parseFlag('strict', query.strict)) };
  }

  timeTravel(query: AnalyticsTimeTravelQuery) {
    if (query.at === undefined || query.at.trim() === '') throw badRequest('missing at query parameter');
    const project = this.deps.project;
    const programPath = project.programPath;
    let file: string;
    if (query.trace !== undefined && query.trace !== '') {
      file = resolveTrace(query.trace, { projectRoot: project.projectRoot, programDir: programPath ? path.dirname(programPath) : null, stateDir: this.deps.stateDir });
    } else {
      if (!programPath) throw badRequest(NO_PROGRAM_MESSAGE);
      const beside = programPath.replace(/\.[^./\\]*$/, '') + '.trace';
      if (!fs.existsSync(beside)) throw badRequest('missing trace query parameter; pass trace=<path> or record a .trace beside the program');
      file = beside;
    }
    const trace = loadTraceFile(file);
    const atMs = parseAt(query.at, trace);
    return {
      version: API_VERSION,
      trace: projectRelative(project, file),
      at: query.at,
      time_travel: timeTravel(trace, atMs, parseInspect(query.inspect)),
    };
  }

  humanTeaming() {
    const input = this.input();
    return { ...this.head(input), human_teaming: humanTeaming(input) };
  }

  governance(query: AnalyticsGovernanceQuery) {
    const input = this.input();
    const result = governanceCheck(input, query.policy);
    return { ...this.head(input), policy: result.policy, governance: result };
  }
}
