import * as z from 'zod';
import { defineSpec } from '../spec.js';

/**
 * Program analytics (docs/analytics.md): decision-support reports over the loaded program, computed on
 * every request and never persisted — readiness trends and forecasts from the readiness samples the
 * agent records (the SRE sample ring), failure what-ifs, a composite mission risk, a trust-weighted
 * dependency graph, the mission twin, a certification evidence pack, trace time travel, human/robot
 * teaming checks and operational-policy checks. All are open reads under the read-auth policy (docs/security.md §6).
 */

const text = (max: number, what: string) => z.string().max(max).optional().describe(what);

export interface AnalyticsReadinessQuery {
  forecast_days?: string | undefined;
}
export interface AnalyticsForecastQuery {
  horizon?: string | undefined;
  all?: string | undefined;
}
export interface AnalyticsWhatIfQuery {
  scenario?: string | undefined;
  all?: string | undefined;
}
export interface AnalyticsTrustGraphQuery {
  format?: string | undefined;
}
export interface AnalyticsCertificationQuery {
  strict?: string | undefined;
}
export interface AnalyticsTimeTravelQuery {
  at?: string | undefined;
  inspect?: string | undefined;
  trace?: string | undefined;
}
export interface AnalyticsGovernanceQuery {
  policy?: string | undefined;
}

export const getAnalyticsReadiness = defineSpec<Record<string, never>, AnalyticsReadinessQuery>({
  id: 'getAnalyticsReadiness',
  group: 'analytics',
  summary: 'Readiness trends of the loaded program from the recorded readiness samples, with an optional linear forecast',
  method: 'GET',
  path: '/v1/analytics/readiness',
  access: { kind: 'read' },
  rpc: { name: 'GetAnalyticsReadiness', request: 'QueryRequest' },
  cli: ['analytics', 'readiness'],
  query: z.lazy(() => z.object({ forecast_days: text(16, 'Forecast horizon in days (positive integer, at most 3650)') })),
});

export const getAnalyticsReadinessForecast = defineSpec<Record<string, never>, AnalyticsForecastQuery>({
  id: 'getAnalyticsReadinessForecast',
  group: 'analytics',
  summary: 'Readiness forecast: current readiness, recorded trend and program-derived degradation per horizon',
  method: 'GET',
  path: '/v1/analytics/readiness-forecast',
  access: { kind: 'read' },
  rpc: { name: 'GetAnalyticsReadinessForecast', request: 'QueryRequest' },
  cli: ['analytics', 'readiness-forecast'],
  query: z.lazy(() =>
    z.object({
      horizon: text(16, 'Horizon in days: 7, 7d, 14d (default 7)'),
      all: text(8, '1|true: the horizons 7, 14 and 30'),
    }),
  ),
});

export const getAnalyticsWhatIf = defineSpec<Record<string, never>, AnalyticsWhatIfQuery>({
  id: 'getAnalyticsWhatIf',
  group: 'analytics',
  summary: 'Failure what-if: recovery simulation and scenario-specific readiness per failure scenario',
  method: 'GET',
  path: '/v1/analytics/what-if',
  access: { kind: 'read' },
  rpc: { name: 'GetAnalyticsWhatIf', request: 'QueryRequest' },
  cli: ['analytics', 'what-if'],
  query: z.lazy(() =>
    z.object({
      scenario: text(64, 'gps_failure, camera_failure, lidar_failure, connectivity_failure, provider_failure, package_failure, battery_failure'),
      all: text(8, '1|true (or no scenario): the scenarios the program suggests'),
    }),
  ),
});

export const getAnalyticsMissionRisk = defineSpec({
  id: 'getAnalyticsMissionRisk',
  group: 'analytics',
  summary: 'Composite deployment risk 0–100 of the loaded program with weighted factors and mitigations',
  method: 'GET',
  path: '/v1/analytics/mission-risk',
  access: { kind: 'read' },
  rpc: { name: 'GetAnalyticsMissionRisk', request: 'Empty' },
  cli: ['analytics', 'mission-risk'],
});

export const getAnalyticsTrustGraph = defineSpec<Record<string, never>, AnalyticsTrustGraphQuery>({
  id: 'getAnalyticsTrustGraph',
  group: 'analytics',
  summary: 'Trust-weighted dependency graph of the program (and configuration) as JSON, Mermaid, DOT or text',
  method: 'GET',
  path: '/v1/analytics/trust-graph',
  access: { kind: 'read' },
  rpc: { name: 'GetAnalyticsTrustGraph', request: 'QueryRequest' },
  cli: ['analytics', 'trust-graph'],
  query: z.lazy(() => z.object({ format: text(16, 'json (default), mermaid, dot (graphviz), text (txt)') })),
});

export const getAnalyticsMissionTwin = defineSpec({
  id: 'getAnalyticsMissionTwin',
  group: 'analytics',
  summary: 'Mission twin of the loaded program: state, readiness, risks and a 7/14-day forecast',
  method: 'GET',
  path: '/v1/analytics/mission-twin',
  access: { kind: 'read' },
  rpc: { name: 'GetAnalyticsMissionTwin', request: 'Empty' },
  cli: ['analytics', 'mission-twin'],
});

export const getAnalyticsCertificationPack = defineSpec<Record<string, never>, AnalyticsCertificationQuery>({
  id: 'getAnalyticsCertificationPack',
  group: 'analytics',
  summary: 'Certification evidence pack: proof over certify/deploy blocks plus verification, readiness, safety, recovery and trust evidence',
  method: 'GET',
  path: '/v1/analytics/certification-pack',
  access: { kind: 'read' },
  rpc: { name: 'GetAnalyticsCertificationPack', request: 'QueryRequest' },
  cli: ['analytics', 'certification-pack'],
  query: z.lazy(() => z.object({ strict: text(8, '1|true: strict proof') })),
});

export const getAnalyticsTimeTravel = defineSpec<Record<string, never>, AnalyticsTimeTravelQuery>({
  id: 'getAnalyticsTimeTravel',
  group: 'analytics',
  summary: 'State of a recorded trace (inside the project) as of a point in simulated time',
  method: 'GET',
  path: '/v1/analytics/time-travel',
  access: { kind: 'read' },
  rpc: { name: 'GetAnalyticsTimeTravel', request: 'QueryRequest' },
  cli: ['analytics', 'time-travel'],
  query: z.lazy(() =>
    z.object({
      at: text(64, 'milliseconds, T+mm:ss, T+hh:mm:ss, hh:mm:ss, mm:ss or an RFC 3339 time'),
      inspect: text(128, 'comma list: decisions, health, readiness, safety, all'),
      trace: text(1024, 'trace file inside the project root (default: <program>.trace)'),
    }),
  ),
});

export const getAnalyticsHumanTeaming = defineSpec({
  id: 'getAnalyticsHumanTeaming',
  group: 'analytics',
  summary: 'Human/robot teaming: approval paths, escalations and fallback actions of the loaded program',
  method: 'GET',
  path: '/v1/analytics/human-teaming',
  access: { kind: 'read' },
  rpc: { name: 'GetAnalyticsHumanTeaming', request: 'Empty' },
  cli: ['analytics', 'human-teaming'],
});

export const getAnalyticsGovernance = defineSpec<Record<string, never>, AnalyticsGovernanceQuery>({
  id: 'getAnalyticsGovernance',
  group: 'analytics',
  summary: 'Checks an operational policy block of the loaded program (max_speed, kill switch, capabilities, readiness, hours)',
  method: 'GET',
  path: '/v1/analytics/governance',
  access: { kind: 'read' },
  rpc: { name: 'GetAnalyticsGovernance', request: 'QueryRequest' },
  cli: ['analytics', 'governance'],
  query: z.lazy(() => z.object({ policy: text(128, 'Policy name (default: the first declared)') })),
});

export const analyticsSpecs = [
  getAnalyticsReadiness,
  getAnalyticsReadinessForecast,
  getAnalyticsWhatIf,
  getAnalyticsMissionRisk,
  getAnalyticsTrustGraph,
  getAnalyticsMissionTwin,
  getAnalyticsCertificationPack,
  getAnalyticsTimeTravel,
  getAnalyticsHumanTeaming,
  getAnalyticsGovernance,
];
