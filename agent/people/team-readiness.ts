/**
 * Human (team) readiness (docs/people.md § Team readiness): is a qualified, available, trusted team
 * in place for the loaded program's mission. Pure: the caller passes the registry, the readiness
 * settings of the configuration, the program's required operator capabilities, the wearables' link
 * state and "now".
 */
import {
  certificationsValid,
  isAvailable,
  isOperationalTrust,
  isTable,
  OPERATOR_CAPABILITIES,
  type Human,
  type PeopleRegistry,
  type Table,
} from './people-registry.js';

export interface ReadinessIssue {
  factor: string;
  severity: 'High' | 'Medium' | 'Low';
  message: string;
  suggested_action: string | null;
}

export interface TeamReadiness {
  profile: string;
  operator_ready: boolean;
  team_ready: boolean;
  mission_ready: boolean;
  total_score: number;
  minimum_score: number;
  dimensions: { dimension: string; score: number; weight_percent: number; passed: boolean; detail: string }[];
  issues: ReadinessIssue[];
  /** Per human: the seven dimension scores and the weighted score (ours, to explain `total_score`). */
  operators: { human_id: string; score: number; scores: Record<WeightKey, number> }[];
  required_capabilities: string[];
}

const WEIGHT_KEYS = ['certification', 'capability', 'availability', 'trust', 'location', 'permissions', 'wearable_connectivity'] as const;
type WeightKey = (typeof WEIGHT_KEYS)[number];
const DEFAULT_WEIGHTS: Record<WeightKey, number> = {
  certification: 25,
  capability: 20,
  availability: 15,
  trust: 15,
  location: 10,
  permissions: 10,
  wearable_connectivity: 5,
};

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : typeof v === 'bigint' ? Number(v) : null);
const table = (v: unknown): Table => (isTable(v) ? v : {});

export interface ReadinessProfile {
  profile: string;
  minimum: number;
  requireSupervisor: boolean;
  weights: Record<WeightKey, number>;
}

/** `[readiness]` and `[readiness.profiles.human_collaboration]` of the merged tree. */
export function readinessProfile(tree: Table): ReadinessProfile {
  const readiness = table(tree['readiness']);
  const collab = table(table(readiness['profiles'])['human_collaboration']);
  const gates = table(readiness['gates']);
  const configured = isTable(collab['weights']) ? collab['weights'] : null;
  const weights = { ...DEFAULT_WEIGHTS };
  if (configured) {
    for (const k of WEIGHT_KEYS) {
      const v = num(configured[k]);
      // Fractions (0.25) and whole percentages (25) both mean a share; a missing key weighs nothing.
      weights[k] = v === null ? 0 : Math.round(v <= 1 ? v * 100 : v);
    }
  }
  const supervisor = collab['require_supervisor_approval'] ?? gates['require_supervisor_for_mission'];
  return {
    profile: typeof readiness['profile'] === 'string' && readiness['profile'] !== '' ? readiness['profile'] : 'human_collaboration',
    minimum: num(readiness['min_score']) ?? num(collab['min_score']) ?? 85,
    requireSupervisor: supervisor === true,
    weights,
  };
}

/** Link state of a wearable as the readiness sees it: `false` when known to be disconnected. */
export type WearableLinkOk = (wearableId: string) => boolean;

export function evaluateTeam(
  registry: PeopleRegistry,
  tree: Table,
  programCapabilities: readonly string[],
  linkOk: WearableLinkOk,
  now: number,
): TeamReadiness {
  const p = readinessProfile(tree);
  const required = [...new Set(programCapabilities.filter((c) => OPERATOR_CAPABILITIES.has(c)))].sort();
  const base = { profile: p.profile, minimum_score: p.minimum, required_capabilities: required };
  if (registry.humans.length === 0) {
    return {
      ...base,
      operator_ready: false,
      team_ready: false,
      mission_ready: false,
      total_score: 0,
      dimensions: [],
      operators: [],
      issues: [
        {
          factor: 'Operator',
          severity: 'High',
          message: 'no human operators configured in device tree',
          suggested_action: 'add [[fleet.humans]] (or [[humans]]) entries with a role, certifications and availability',
        },
      ],
    };
  }
  const issues: ReadinessIssue[] = [];
  const operators = registry.humans.map((h) => scoreHuman(h, registry, required, p.weights, linkOk, now, issues));
  const total = Math.floor(operators.reduce((s, o) => s + o.score, 0) / operators.length);
  const operatorReady = total >= p.minimum;
  const supervisorPresent = registry.humans.some((h) => h.role === 'supervisor' && isAvailable(h) && isOperationalTrust(h.trust_level));
  if (p.requireSupervisor && !supervisorPresent) {
    issues.push({
      factor: 'Team',
      severity: 'High',
      message: 'an available, trusted supervisor is required for the mission and none is configured',
      suggested_action: 'add a human with role = "supervisor", trust_level = "verified" and availability = "available"',
    });
  }
  const teamReady = operatorReady && (!p.requireSupervisor || supervisorPresent);
  const missing = required.filter((c) => !registry.humans.some((h) => isAvailable(h) && h.capabilities.includes(c)));
  if (missing.length > 0) {
    issues.push({
      factor: 'Mission',
      severity: 'High',
      message: `no available human holds the required capabilities: ${missing.join(', ')}`,
      suggested_action: 'assign an available operator with these capabilities',
    });
  }
  return {
    ...base,
    operator_ready: operatorReady,
    team_ready: teamReady,
    mission_ready: teamReady && missing.length === 0,
    total_score: total,
    dimensions: [
      { dimension: 'Operator', score: total, weight_percent: 100, passed: operatorReady, detail: `${operators.length} operator(s) evaluated` },
    ],
    issues,
    operators,
  };
}

function scoreHuman(
  h: Human,
  registry: PeopleRegistry,
  required: readonly string[],
  weights: Record<WeightKey, number>,
  linkOk: WearableLinkOk,
  now: number,
  issues: ReadinessIssue[],
): { human_id: string; score: number; scores: Record<WeightKey, number> } {
  const certsValid = certificationsValid(h, now);
  if (!certsValid) {
    issues.push({
      factor: 'Operator',
      severity: 'Medium',
      message: `operator '${h.id}' has expired or missing certifications`,
      suggested_action: 'renew the certification and update its expires date',
    });
  }
  const linked = registry.wearables.filter((w) => w.human_id === h.id);
  // A linked wearable counts when its trust is operational or unset and it is not known to be
  // disconnected (stale telemetry or an offline device in the pool).
  const ok = linked.filter((w) => (w.trust_level === null || isOperationalTrust(w.trust_level)) && linkOk(w.id)).length;
  const scores: Record<WeightKey, number> = {
    certification: certsValid ? 100 : 40,
    capability: required.length === 0 || required.every((c) => h.capabilities.includes(c)) ? 100 : 30,
    availability: isAvailable(h) ? 100 : 0,
    trust: isOperationalTrust(h.trust_level) ? 100 : 50,
    location: h.location !== null && h.location !== '' ? 100 : 80,
    permissions: h.permissions.length > 0 ? 100 : 90,
    wearable_connectivity: linked.length === 0 ? 100 : Math.max(50, Math.floor((100 * ok) / linked.length)),
  };
  const weightSum = WEIGHT_KEYS.reduce((s, k) => s + weights[k], 0);
  const score = weightSum === 0 ? 100 : Math.min(100, Math.floor(WEIGHT_KEYS.reduce((s, k) => s + scores[k] * weights[k], 0) / weightSum));
  return { human_id: h.id, score, scores };
}
