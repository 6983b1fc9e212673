/**
 * The vocabulary of recovery (docs/program-language.md §12): failure classification and diagnosis by
 * keyword, default actions per classification, and the shape of one recovery action (tagged
 * strategy and correction, risk, approval). Pure text rules, no program or configuration access.
 */

export type FailureClassification =
  | 'SensorFailure'
  | 'ActuatorFailure'
  | 'ConnectivityFailure'
  | 'ProviderFailure'
  | 'PackageFailure'
  | 'MissionFailure'
  | 'HealthDegradation'
  | 'FleetFailure'
  | 'SwarmFailure'
  | 'SafetyFailure'
  | 'Unknown';

export type RiskLevel = 'Low' | 'Medium' | 'High' | 'Critical';
export type RecoveryMode = 'NormalMode' | 'DegradedMode' | 'SafeMode' | 'EmergencyMode' | 'RecoveryMode';

/** Strategy: a snake_case unit variant, or `{custom: text}`. */
export type RecoveryStrategy = 'failover' | 'speed_reduction' | 'degraded_mode' | 'provider_reconnect' | 'mission_pause' | { custom: string };

/** Correction: snake_case, externally tagged (`"stop_motion"`, `{"enter_mode":{"mode":"SafeMode"}}`). */
export type RecoveryCorrection =
  | { enter_mode: { mode: RecoveryMode } }
  | { switch_source: { to: string } }
  | { limit_speed: { max_mps: number | null } }
  | { reconnect: { target: string } }
  | 'pause_mission'
  | 'stop_motion'
  | { custom: string };

export interface RecoveryAction {
  description: string;
  strategy: RecoveryStrategy;
  correction: RecoveryCorrection;
  risk: RiskLevel;
  requires_approval: boolean;
  order: number;
}

/** Keyword families in precedence order; the first family with a keyword in the issue wins. */
const CLASSIFIERS: ReadonlyArray<[FailureClassification, readonly string[]]> = [
  ['SensorFailure', ['gps', 'camera', 'lidar', 'sensor', 'imu']],
  ['ActuatorFailure', ['actuator', 'motor', 'drive']],
  ['ConnectivityFailure', ['lte', 'wifi', 'connect', 'network']],
  ['ProviderFailure', ['provider']],
  ['PackageFailure', ['package']],
  ['MissionFailure', ['mission']],
  ['HealthDegradation', ['health', 'degrad']],
  ['FleetFailure', ['fleet']],
  ['SwarmFailure', ['swarm']],
  ['SafetyFailure', ['safety', 'kill']],
];

export function classifyFailure(issue: string): FailureClassification {
  const text = issue.toLowerCase();
  for (const [classification, keywords] of CLASSIFIERS) {
    if (keywords.some((keyword) => text.includes(keyword))) return classification;
  }
  return 'Unknown';
}

/** Specific diagnoses for well-known components, checked before the classification's generic text. */
const KEYWORD_DIAGNOSES: ReadonlyArray<[string, string]> = [
  ['gps', 'Satellite lock lost'],
  ['gnss', 'Satellite lock lost'],
  ['camera', 'Camera feed unavailable'],
  ['lidar', 'Lidar scans unavailable'],
  ['imu', 'Inertial measurements unavailable'],
  ['lte', 'Cellular link lost'],
  ['wifi', 'WiFi link lost'],
  ['battery', 'Battery energy below safe margin'],
  ['mqtt', 'Message broker unreachable'],
];

const CLASSIFICATION_DIAGNOSES: Readonly<Record<FailureClassification, string>> = {
  SensorFailure: 'Sensor data unavailable or implausible',
  ActuatorFailure: 'Actuator not responding to commands',
  ConnectivityFailure: 'Network connectivity lost',
  ProviderFailure: 'Provider unavailable',
  PackageFailure: 'Package failed to load or verify',
  MissionFailure: 'Mission cannot proceed as planned',
  HealthDegradation: 'Health degraded below policy',
  FleetFailure: 'Fleet member unavailable',
  SwarmFailure: 'Swarm coordination lost',
  SafetyFailure: 'Safety condition violated',
  Unknown: 'Unclassified failure',
};

export function diagnoseFailure(issue: string, classification: FailureClassification): string {
  const text = issue.toLowerCase();
  for (const [keyword, diagnosis] of KEYWORD_DIAGNOSES) if (text.includes(keyword)) return diagnosis;
  return CLASSIFICATION_DIAGNOSES[classification];
}

/** Default actions when neither a policy nor the knowledge store has any (token-joined, docs/program-language.md §5.1). */
export function defaultActions(issue: string, classification: FailureClassification): string[] {
  const text = issue.toLowerCase();
  switch (classification) {
    case 'SensorFailure':
      if (text.includes('gps')) return ['switch_to visual_odometry', 'reduce_speed 0.5m/s', 'enter degraded_mode'];
      if (text.includes('camera')) return ['switch_to lidar_perception', 'reduce_speed 0.5m/s', 'enter degraded_mode'];
      if (text.includes('lidar')) return ['switch_to camera_depth', 'reduce_speed 0.3m/s', 'enter degraded_mode'];
      return ['reduce_speed 0.5m/s', 'enter degraded_mode'];
    case 'ActuatorFailure':
      return ['stop motion', 'enter safe_mode'];
    case 'ConnectivityFailure':
      return ['buffer telemetry', 'reconnect network', 'enter degraded_mode'];
    case 'ProviderFailure':
      return ['reconnect provider', 'switch_to fallback_provider'];
    case 'PackageFailure':
      return ['switch_to previous_package', 'enter degraded_mode'];
    case 'MissionFailure':
      return ['pause mission', 'notify operator'];
    case 'HealthDegradation':
      return ['reduce_speed 0.5m/s', 'enter degraded_mode'];
    case 'FleetFailure':
      return ['reassign mission', 'notify operator'];
    case 'SwarmFailure':
      return ['reduce_speed 0.5m/s', 'regroup swarm'];
    case 'SafetyFailure':
      return ['emergency_stop', 'enter safe_mode'];
    case 'Unknown':
      if (text.includes('battery')) return ['reduce_speed 0.5m/s', 'return_to_dock', 'notify operator'];
      return ['pause mission', 'notify operator'];
  }
}

/** Word-level view of an action: `reduce_speed 0.4m/s` → `reduce speed 0.4m/s`. */
const words = (text: string): string => text.toLowerCase().replace(/_/g, ' ');

export function strategyOf(action: string): RecoveryStrategy {
  const text = action.toLowerCase();
  if (text.includes('switch_to') || text.includes('visual_odometry') || text.includes('failover')) return 'failover';
  if (text.includes('reduce_speed') || text.includes('slow')) return 'speed_reduction';
  if (text.includes('degraded') || text.includes('safe_mode')) return 'degraded_mode';
  if (text.includes('reconnect')) return 'provider_reconnect';
  if (text.includes('pause')) return 'mission_pause';
  return { custom: action };
}

export function modeOf(name: string): RecoveryMode | null {
  const text = name.toLowerCase();
  if (text.startsWith('normal')) return 'NormalMode';
  if (text.startsWith('degraded')) return 'DegradedMode';
  if (text.startsWith('safe')) return 'SafeMode';
  if (text.startsWith('emergency')) return 'EmergencyMode';
  if (text.startsWith('recovery')) return 'RecoveryMode';
  return null;
}

/** `0.4m/s` → 0.4; km/h and mph converted; anything else null. */
function speedOf(text: string): number | null {
  const match = /(-?\d+(?:\.\d+)?)\s*(m\/s|km\/h|mph)?/.exec(text);
  if (!match) return null;
  const value = Number(match[1]);
  const unit = match[2] ?? 'm/s';
  const mps = unit === 'km/h' ? value / 3.6 : unit === 'mph' ? value * 0.44704 : value;
  return Math.round(mps * 1e6) / 1e6;
}

export function correctionOf(action: string): RecoveryCorrection {
  const trimmed = action.trim();
  const [verb = '', ...rest] = trimmed.split(/\s+/);
  const argument = rest.join(' ');
  const lower = verb.toLowerCase();
  if (lower === 'enter') {
    const mode = modeOf(argument);
    if (mode) return { enter_mode: { mode } };
  }
  if (lower === 'switch_to' && argument !== '') return { switch_source: { to: argument } };
  if (lower === 'reduce_speed') return { limit_speed: { max_mps: speedOf(argument) } };
  if (lower === 'reconnect') return { reconnect: { target: argument } };
  if (lower === 'pause' || lower === 'pause_mission') return 'pause_mission';
  if (lower === 'stop' || lower === 'stop_drive' || lower === 'stop_motion' || lower === 'halt' || lower === 'emergency_stop') return 'stop_motion';
  return { custom: trimmed };
}

export function riskOf(action: string): RiskLevel {
  const text = words(action);
  if (text.includes('halt') || text.includes('emergency')) return 'Critical';
  if (text.includes('unsafe') || (text.includes('restart') && text.includes('fleet')) || text.includes('open gate')) return 'High';
  return 'Low';
}

const RISK_RANK: Readonly<Record<RiskLevel, number>> = { Low: 0, Medium: 1, High: 2, Critical: 3 };

export function maxRisk(risks: readonly RiskLevel[]): RiskLevel {
  return risks.reduce<RiskLevel>((worst, risk) => (RISK_RANK[risk] > RISK_RANK[worst] ? risk : worst), 'Low');
}

export function requiresApproval(action: string, risk: RiskLevel): boolean {
  return risk === 'High' || risk === 'Critical' || words(action).includes('resume mission');
}

export function recoveryAction(description: string, order: number): RecoveryAction {
  const risk = riskOf(description);
  return {
    description,
    strategy: strategyOf(description),
    correction: correctionOf(description),
    risk,
    requires_approval: requiresApproval(description, risk),
    order,
  };
}
