/**
 * The built-in deployment profile catalogue (docs/operations.md § Deployment gate, profiles and
 * verification): nineteen operating environments with the capabilities, hardware, certifications
 * and autonomy limit each one asks for. Pure data and lookups; the governance checks (verification,
 * compliance) read the same records.
 */

export const RISK_LEVELS = ['negligible', 'low', 'medium', 'high', 'critical', 'life_critical', 'mission_critical'] as const;
export type RiskLevel = (typeof RISK_LEVELS)[number];

/** Autonomy levels 0–5, in order. */
export const AUTONOMY_LEVELS = ['manual', 'assisted', 'partial_automation', 'conditional_autonomy', 'high_autonomy', 'full_autonomy'] as const;
export type AutonomyLevel = (typeof AUTONOMY_LEVELS)[number];

export const PROFILE_KINDS = [
  'warehouse',
  'factory',
  'hospital',
  'operating_room',
  'search_rescue',
  'agriculture',
  'mining',
  'construction',
  'maritime',
  'aviation',
  'space',
  'road_vehicle',
  'campus',
  'smart_building',
  'home',
  'retail',
  'office',
  'defense',
  'research',
] as const;
export type ProfileKind = (typeof PROFILE_KINDS)[number];

/** A kind of the catalogue, or `{custom: "<normalised name>"}` for any other name. */
export type ProfileKindJson = ProfileKind | { custom: string };

export interface DeploymentProfile {
  kind: ProfileKindJson;
  display_name: string;
  description: string;
  safety_policies: string[];
  recovery_policies: string[];
  default_risk_level: RiskLevel;
  required_capabilities: string[];
  required_hardware: string[];
  required_certifications: string[];
  decision_authority: { max_autonomy_level: AutonomyLevel; requires_human_approval_above_risk: RiskLevel; escalation_contacts?: string[] };
  communication: { allowed_protocols?: string[]; max_latency_ms?: number; offline_capable: boolean; bandwidth_tiers?: string[] };
  environmental: { min_temperature_c?: number; max_temperature_c?: number; max_humidity_pct?: number; hazard_classes?: string[] };
  operational_constraints: string[];
  standards_profiles: string[];
}

interface Row {
  display: string;
  risk: RiskLevel;
  autonomy: AutonomyLevel;
  caps?: string[];
  hardware?: string[];
  certs?: string[];
  constraints?: string[];
  standards?: string[];
}

const PLAIN: Row = { display: '', risk: 'medium', autonomy: 'partial_automation' };

const ROWS: Record<ProfileKind, Row> = {
  warehouse: { display: 'Warehouse', risk: 'medium', autonomy: 'partial_automation', caps: ['navigation', 'obstacle_avoidance'], hardware: ['lidar', 'imu'], certs: ['iso3691-4'], constraints: ['indoor', 'connectivity'], standards: ['industrial_safety'] },
  factory: { display: 'Factory', risk: 'high', autonomy: 'partial_automation', caps: ['manipulation', 'safety_zones'], hardware: ['force_torque', 'lidar'], certs: ['iso10218', 'iso13849'], constraints: ['indoor', 'hazardous_area'], standards: ['industrial_safety', 'functional_safety'] },
  hospital: { display: 'Hospital', risk: 'life_critical', autonomy: 'assisted', caps: ['navigation', 'human_proximity'], hardware: ['lidar', 'camera'], certs: ['iec62304', 'iso13485'], constraints: ['indoor', 'clean_room'], standards: ['medical_device', 'functional_safety'] },
  operating_room: { display: 'Operating Room', risk: 'life_critical', autonomy: 'assisted', caps: ['precision_control', 'sterile_operation'], hardware: ['force_torque', 'camera'], certs: ['iec62304'], constraints: ['clean_room', 'high_emi'], standards: ['medical_device'] },
  search_rescue: { display: 'Search & Rescue', risk: 'mission_critical', autonomy: 'conditional_autonomy', caps: ['navigation', 'gps_fallback', 'thermal_imaging'], hardware: ['gps', 'lidar', 'thermal_camera'], certs: ['iso26262'], constraints: ['outdoor', 'remote', 'limited_bandwidth'], standards: ['aviation'] },
  agriculture: { ...PLAIN, display: 'agriculture' },
  mining: { ...PLAIN, display: 'mining' },
  construction: { ...PLAIN, display: 'construction' },
  maritime: { ...PLAIN, display: 'maritime' },
  aviation: { ...PLAIN, display: 'aviation' },
  space: { ...PLAIN, display: 'space' },
  road_vehicle: { display: 'Road Vehicle', risk: 'life_critical', autonomy: 'conditional_autonomy', caps: ['perception', 'lane_keeping', 'aeb'], hardware: ['camera', 'radar', 'lidar'], certs: ['iso26262', 'iso21448'], constraints: ['outdoor', 'gps_availability'], standards: ['automotive', 'functional_safety'] },
  campus: { ...PLAIN, display: 'campus' },
  smart_building: { display: 'Smart Building', risk: 'low', autonomy: 'partial_automation', caps: ['hvac_control', 'access_control'], hardware: ['iot_gateway'], constraints: ['indoor', 'connectivity'], standards: ['cybersecurity'] },
  home: { ...PLAIN, display: 'home' },
  retail: { ...PLAIN, display: 'retail' },
  office: { ...PLAIN, display: 'office' },
  defense: { ...PLAIN, display: 'defense' },
  research: { ...PLAIN, display: 'research' },
};

const ALIASES: Record<string, ProfileKind> = {
  industrial: 'factory',
  healthcare: 'hospital',
  or: 'operating_room',
  sar: 'search_rescue',
  agri: 'agriculture',
  adas: 'road_vehicle',
  automotive: 'road_vehicle',
  building: 'smart_building',
  military: 'defense',
  lab: 'research',
};

/** Lower case, `-` and spaces → `_` (so `Search-Rescue`, `search rescue` and `SEARCH_RESCUE` agree). */
export function normaliseProfileName(name: string): string {
  return name.trim().toLowerCase().replace(/[-\s]/g, '_');
}

/** The catalogue kind a name or alias stands for, or null when it is none. */
export function profileKindOf(name: string): ProfileKind | null {
  const n = normaliseProfileName(name);
  if ((PROFILE_KINDS as readonly string[]).includes(n)) return n as ProfileKind;
  return Object.hasOwn(ALIASES, n) ? ALIASES[n]! : null;
}

function record(kind: ProfileKindJson, row: Row): DeploymentProfile {
  return {
    kind,
    display_name: row.display,
    description: `Built-in ${row.display} deployment profile`,
    safety_policies: ['safety.default'],
    recovery_policies: ['recovery.default'],
    default_risk_level: row.risk,
    required_capabilities: row.caps ?? [],
    required_hardware: row.hardware ?? [],
    required_certifications: row.certs ?? [],
    decision_authority: { max_autonomy_level: row.autonomy, requires_human_approval_above_risk: 'high', escalation_contacts: [] },
    communication: { offline_capable: false },
    environmental: {},
    operational_constraints: row.constraints ?? [],
    standards_profiles: row.standards ?? [],
  };
}

/** The catalogue profile of a name or alias; null for a name outside the catalogue. */
export function builtinProfile(name: string): DeploymentProfile | null {
  const kind = profileKindOf(name);
  return kind ? record(kind, ROWS[kind]) : null;
}

/**
 * What a name resolves to for the catalogue lookup (`?name=`): the built-in profile, or, for any
 * other name, a synthetic profile `{custom: "<normalised name>"}` with medium risk, partial
 * automation and no requirements. Clients ask by name and expect an answer (client compatibility).
 */
export function resolveProfile(name: string): DeploymentProfile {
  const builtin = builtinProfile(name);
  if (builtin) return builtin;
  const custom = normaliseProfileName(name);
  return record({ custom }, { ...PLAIN, display: custom });
}

export function allProfiles(): DeploymentProfile[] {
  return PROFILE_KINDS.map((k) => record(k, ROWS[k]));
}

export const profileKindText = (kind: ProfileKindJson): string => (typeof kind === 'string' ? kind : kind.custom);

export const autonomyRank = (level: AutonomyLevel): number => AUTONOMY_LEVELS.indexOf(level);

/** The list item: no hardware or constraints (docs/operations.md). */
export function listItem(p: DeploymentProfile) {
  return {
    kind: p.kind,
    display_name: p.display_name,
    description: p.description,
    default_risk_level: p.default_risk_level,
    max_autonomy_level: p.decision_authority.max_autonomy_level,
    required_capabilities: p.required_capabilities,
    required_certifications: p.required_certifications,
    standards_profiles: p.standards_profiles,
  };
}

/** The detail record: empty lists and absent options omitted. */
export function detailRecord(p: DeploymentProfile): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(p)) {
    if (Array.isArray(v) && v.length === 0) continue;
    if (k === 'decision_authority') {
      const da = v as DeploymentProfile['decision_authority'];
      out[k] = { max_autonomy_level: da.max_autonomy_level, requires_human_approval_above_risk: da.requires_human_approval_above_risk, ...(da.escalation_contacts?.length ? { escalation_contacts: da.escalation_contacts } : {}) };
      continue;
    }
    out[k] = v;
  }
  return out;
}
