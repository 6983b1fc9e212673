/**
 * The program model (docs/program-language.md §3–§5): what the parser produces and every program
 * operation reads. One list per declaration kind plus `robots`, so an analysis reads exactly the
 * declarations it needs and never walks a generic tree.
 *
 * Conventions:
 * - `loc` is the 1-based line/column of the declaration's first token.
 * - Free token sequences (conditions, actions, constraints) are stored as strings built by the
 *   token-join rule of §5.1 (`joinTokens` in token-join.ts): lexemes joined by single spaces, unit
 *   literals glued (`0.5m/s`), string quotes dropped, no trailing `;`.
 * - Quantities keep the number and unit as written (`Quantity`); `units.ts` converts them.
 * - Anything the strict parser does not model becomes a `GenericDecl` (the tolerant layer, §4.3).
 */

export interface Loc {
  line: number;
  column: number;
}

/** A number with its unit as lexed (`0.5m/s` → {value: 0.5, unit: 'm/s', text: '0.5m/s'}). */
export interface Quantity {
  value: number;
  /** Unit suffix as written (`ms`, `m/s`, `Wh`, `GB`, `%`), or null for a bare number. */
  unit: string | null;
  /** The glued lexeme, e.g. `100ms`, `8GB`, `20%`. */
  text: string;
}

// ---------------------------------------------------------------------------
// Expressions and statements (read by the simulator and the interpreter)

export type Expr =
  | { kind: 'number'; value: number; unit: string | null; text: string; loc: Loc }
  | { kind: 'string'; value: string; loc: Loc }
  | { kind: 'bool'; value: boolean; loc: Loc }
  | { kind: 'ident'; name: string; loc: Loc }
  | { kind: 'regex'; pattern: string; loc: Loc }
  | { kind: 'list'; items: Expr[]; loc: Loc }
  | { kind: 'unary'; op: '-' | 'not' | 'await'; operand: Expr; loc: Loc }
  | { kind: 'binary'; op: BinaryOp; left: Expr; right: Expr; loc: Loc }
  | { kind: 'member'; object: Expr; property: string; loc: Loc }
  | { kind: 'call'; callee: Expr; args: Arg[]; loc: Loc }
  /** `Name { f: v }`; `typeArgs` holds a generic literal's arguments (`Sample<Float> { … }` → ['Float']). */
  | { kind: 'struct'; name: string; typeArgs?: string[]; fields: { name: string; value: Expr }[]; loc: Loc }
  /**
   * A keyword expression (docs/program-language.md §4.1 "Forms added in issue 18"): `execute navigate(goal)`
   * runs an action, `call GetBattery()` a service, `spawn tick()` queues a concurrent task. `call` is
   * always a call expression.
   */
  | { kind: 'keyword'; keyword: 'execute' | 'call' | 'spawn'; call: Extract<Expr, { kind: 'call' }>; loc: Loc };

export type BinaryOp = 'or' | 'and' | '<' | '<=' | '>' | '>=' | '==' | '!=' | '+' | '-' | '*' | '/' | '%' | 'matches';

export interface Arg {
  /** Named argument (`linear: 0.4 m/s`), or null for a positional one. */
  name: string | null;
  value: Expr;
}

export type Stmt =
  /** `value` is null for `let x: T;` (declared, unset until assigned; the type is then required). */
  | { kind: 'let'; name: string; type: string | null; value: Expr | null; loc: Loc }
  | { kind: 'assign'; target: Expr; value: Expr; loc: Loc }
  | { kind: 'if'; condition: Expr; then: Stmt[]; else: Stmt[] | null; loc: Loc }
  | { kind: 'loop'; every: Quantity; body: Stmt[]; loc: Loc }
  | { kind: 'while'; condition: Expr; body: Stmt[]; loc: Loc }
  | { kind: 'publish'; topic: string; value: Expr | null; loc: Loc }
  | { kind: 'enter'; mode: string; loc: Loc }
  | { kind: 'emergency_stop'; loc: Loc }
  | { kind: 'return'; value: Expr | null; loc: Loc }
  | { kind: 'match'; subject: Expr; arms: { pattern: string; body: Stmt[] }[]; loc: Loc }
  | { kind: 'run_pipeline'; pipeline: string; loc: Loc }
  | { kind: 'expr'; expr: Expr; loc: Loc }
  /** A statement the strict layer does not model, kept as joined tokens (never executed). */
  | { kind: 'opaque'; keyword: string; text: string; loc: Loc };

// ---------------------------------------------------------------------------
// Top-level declarations

export interface HardwareProfileDecl {
  name: string;
  cpu: string | null;
  /** Megabytes (GB × 1024). */
  memoryMb: number | null;
  storageMb: number | null;
  /** `gpu: true` → true; `gpu: 32 TOPS` → 32. */
  gpu: boolean | number | null;
  sensors: string[];
  actuators: string[];
  connectivity: string[];
  batteryWh: number | null;
  bandwidthMbps: number | null;
  latencyMs: number | null;
  minPeriodMs: number | null;
  powerW: number | null;
  loc: Loc;
}

export interface DeployDecl {
  robot: string;
  targets: string[];
  loc: Loc;
}

export interface FleetDecl {
  name: string;
  members: string[];
  loc: Loc;
}

export interface HardwareRequirements {
  memoryGb: number | null;
  storageGb: number | null;
  gpu: boolean | null;
  sensors: string[];
  actuators: string[];
  loc: Loc;
}

export interface NetworkRequirements {
  bandwidthMbps: number | null;
  latencyMs: number | null;
  /** `requires_connectivity [WiFi, LTE]` or listed links. */
  connectivity: string[];
  loc: Loc;
}

export interface CertifyDecl {
  standard: string;
  level: string | null;
  loc: Loc;
}

export interface HealthCheckDecl {
  name: string;
  targetKind: 'robot' | 'fleet' | null;
  target: string | null;
  checks: { metric: string; operator: string; threshold: string; loc: Loc }[];
  /** `require at_least 80% robots Healthy;` as joined text. */
  requirements: string[];
  loc: Loc;
}

export interface HealthPolicyDecl {
  name: string;
  handlers: { status: string; actions: string[] }[];
  loc: Loc;
}

export interface RequiresCapabilityDecl {
  capability: string;
  sensors: string[];
  actuators: string[];
  connectivity: string[];
  loc: Loc;
}

export interface KillSwitchDecl {
  name: string;
  priority: string | null;
  remoteSigned: boolean;
  actions: string[];
  body: Stmt[];
  loc: Loc;
}

/** recovery_policy and continuity_policy: `on COND { ACTION; … }`. */
export interface TriggerPolicyDecl {
  name: string;
  triggers: { condition: string; actions: string[] }[];
  loc: Loc;
}

export interface MitigationDecl {
  name: string;
  /** `if COND { … }` clauses in order (usually one). */
  rules: { condition: string; actions: string[] }[];
  loc: Loc;
}

export interface DecisionTreeDecl {
  name: string;
  /** Layer word after the name (`reflex`, `local`, `group`, `fleet`, …), or null. */
  layer: string | null;
  version: string | null;
  rules: { condition: string; actions: string[]; loc: Loc }[];
  loc: Loc;
}

export interface OfflinePolicyDecl {
  name: string;
  maxDuration: Quantity | null;
  allowedActions: string[];
  forbiddenActions: string[];
  loc: Loc;
}

export interface MissionPlanDecl {
  name: string;
  steps: string[];
  constraints: string[];
  loc: Loc;
}

export interface OperatingModeDecl {
  name: string;
  /** normal | degraded | safe | emergency | recovery (as written). */
  kind: string | null;
  loc: Loc;
}

export interface AssuranceCaseDecl {
  name: string;
  evidence: string[];
  loc: Loc;
}

export interface KnowledgeModelDecl {
  name: string;
  components: string[];
  dependencies: { capability: string; requires: string[] }[];
  loc: Loc;
}

export interface StateEstimatorDecl {
  name: string;
  inputs: string[];
  output: string | null;
  loc: Loc;
}

export interface AnomalyDetectorDecl {
  name: string;
  learnedBackend: string | null;
  expected: { metric: string; operator: string; threshold: string }[];
  loc: Loc;
}

export interface AnomalyHandlerDecl {
  detector: string;
  severity: string;
  actions: string[];
  loc: Loc;
}

export interface PrognosticsDecl {
  name: string;
  predicts: string[];
  /** `warn_if X < 30 min;` as joined text. */
  warnings: string[];
  loc: Loc;
}

export interface ResiliencePolicyDecl {
  name: string;
  strategies: string[];
  loc: Loc;
}

export interface SafetyZoneDecl {
  name: string;
  text: string;
  loc: Loc;
}

export interface FunctionDecl {
  name: string;
  params: Param[];
  returnType: string | null;
  body: Stmt[];
  exported: boolean;
  async: boolean;
  loc: Loc;
}

export interface Param {
  name: string;
  type: string | null;
}

/** Tolerant fallback (docs/program-language.md §4.3): `IDENT [IDENT …] { balanced tokens }` or `IDENT … ;`. */
export interface GenericDecl {
  keyword: string;
  name: string | null;
  /** Token lexemes of the whole declaration after the keyword (token-joined form via `text`). */
  tokens: string[];
  text: string;
  loc: Loc;
}

// ---------------------------------------------------------------------------
// Robots

export interface SensorDecl {
  name: string;
  type: string;
  source: string | null;
  /** Driver clause `from vendor.model` (`from bosch.bno055`); null or absent without one. */
  driver?: { vendor: string; model: string } | null;
  loc: Loc;
}

export interface ActuatorDecl {
  name: string;
  type: string;
  loc: Loc;
}

export interface AiModelDecl {
  name: string;
  type: string;
  /** `key: literal;` entries: numbers with units as Quantity, strings, booleans, identifiers. */
  config: Record<string, string | number | boolean | Quantity>;
  loc: Loc;
}

export interface TopicDecl {
  name: string;
  type: string;
  direction: 'publish' | 'subscribe' | null;
  /** The channel after `on`, or null for a topic declared with a member block only (`topic t: T { … }`). */
  channel: string | null;
  /** `secure` modifier: the topic must travel over an authenticated, encrypted link (absent = false). */
  secure?: boolean;
  /** QoS block entries when present (`rate: 10 Hz`, `deadline: 100ms`, `qos: reliable`, …). */
  qos: Record<string, Quantity | string>;
  /** `validate …;` members of the block, token-joined (`data.id matches /^[a-z]+$/`). */
  validations?: string[];
  loc: Loc;
}

export type SafetyRule =
  | { kind: 'max_speed' | 'max_angular'; value: Quantity; loc: Loc }
  | { kind: 'stop_if'; condition: Expr; text: string; loc: Loc }
  | { kind: 'zone'; name: string; shape: 'circle'; center: [Expr, Expr]; radius: Expr; text: string; loc: Loc }
  | { kind: 'zone'; name: string; shape: 'rect'; center: [Expr, Expr]; size: [Expr, Expr]; text: string; loc: Loc };

export interface MissionDecl {
  name: string | null;
  /** Hours (`90 min` → 1.5). */
  durationHours: number | null;
  requiredCapabilities: string[];
  approvals: { actor: string; actions: string[] }[];
  steps: string[];
  loc: Loc;
}

export interface BehaviorDecl {
  name: string;
  params: Param[];
  returnType: string | null;
  requires: Expr | null;
  ensures: Expr | null;
  invariant: Expr | null;
  body: Stmt[];
  loc: Loc;
}

export interface TaskDecl {
  name: string;
  /** Priority word or number as written, or null. */
  priority: string | null;
  /** `task T(a: Int) -> R { … }`: parameters (empty without a list) and return type (null without `->`). */
  params?: Param[];
  returnType?: string | null;
  /** The period, or null for an on-demand task (`task Monitor() -> Status { … }`), run only when called or spawned. */
  every: Quantity | null;
  deadline: Quantity | null;
  jitter: Quantity | null;
  requires: Expr | null;
  budget: { resource: string; limit: Quantity }[];
  body: Stmt[];
  loc: Loc;
}

export interface ModeDecl {
  name: string;
  body: Stmt[];
  loc: Loc;
}

export interface WatchdogDecl {
  name: string;
  timeout: Quantity;
  body: Stmt[];
  loc: Loc;
}

export interface TwinDecl {
  name: string;
  mirror: string[];
  replay: boolean;
  loc: Loc;
}

/** Robot-level triggers (docs/program-language.md §4.2 #9) and `recover from X` handlers (#14). */
export type TriggerDecl =
  | { kind: 'every'; interval: Quantity; body: Stmt[]; loc: Loc }
  | { kind: 'when'; condition: Expr; body: Stmt[]; loc: Loc }
  | { kind: 'on'; event: string; body: Stmt[]; loc: Loc }
  | { kind: 'recover'; failure: string; body: Stmt[]; loc: Loc };

export interface PipelineDecl {
  name: string;
  budget: Quantity | null;
  body: Stmt[];
  loc: Loc;
}

export interface StateMachineDecl {
  name: string;
  states: string[];
  transitions: { from: string; to: string }[];
  loc: Loc;
}

export interface AgentDecl {
  name: string;
  uses: string[];
  tools: string[];
  goal: string | null;
  loc: Loc;
}

export interface RobotDecl {
  name: string;
  doc: string | null;
  sensors: SensorDecl[];
  actuators: ActuatorDecl[];
  aiModels: AiModelDecl[];
  topics: TopicDecl[];
  buses: string[];
  /** `uses hardware H;` names in order. */
  usesHardware: string[];
  /** `exposes capabilities [...]`, in order. */
  exposes: string[];
  safety: SafetyRule[];
  missions: MissionDecl[];
  behaviors: BehaviorDecl[];
  tasks: TaskDecl[];
  modes: ModeDecl[];
  watchdogs: WatchdogDecl[];
  twins: TwinDecl[];
  /** Sensors fused by `observe { … }`. */
  observe: string[];
  /** `verify { … }` / `assert { … }` expressions, evaluated after a behavior or task body. */
  verify: Expr[];
  triggers: TriggerDecl[];
  pipelines: PipelineDecl[];
  stateMachines: StateMachineDecl[];
  agents: AgentDecl[];
  killSwitches: KillSwitchDecl[];
  healthChecks: HealthCheckDecl[];
  /** `robot Peer;` members. */
  peers: string[];
  /** A `permissions` block is present (capability inference: secure_communication). */
  hasPermissions: boolean;
  requiresHardware: HardwareRequirements | null;
  requiresNetwork: NetworkRequirements | null;
  requiresConnectivity: NetworkRequirements | null;
  localDecisionAuthority: string[];
  requiresCentralApproval: string[];
  /** `secret NAME from env("VAR") | file "path" | "literal";` — where the secret comes from, never its value. */
  secrets: SecretDecl[];
  /** Robot-level members kept by the tolerant layer. */
  generic: GenericDecl[];
  loc: Loc;
}

/**
 * A robot's declared secret. A literal's text is not kept: the program model never carries a secret
 * value (docs/operations.md § Secrets).
 */
export interface SecretDecl {
  name: string;
  source: { kind: 'env'; variable: string } | { kind: 'file'; path: string } | { kind: 'literal' };
  loc: Loc;
}

// ---------------------------------------------------------------------------
// The program

export interface Program {
  /** Path the program was read from (as given to the parser). */
  file: string;
  module: string | null;
  imports: string[];
  robots: RobotDecl[];
  hardware: HardwareProfileDecl[];
  deploys: DeployDecl[];
  fleets: FleetDecl[];
  /** Faults named in `simulate_compatibility { fault X; }` blocks, in order. */
  simulateFaults: string[];
  requiresHardware: HardwareRequirements | null;
  requiresNetwork: NetworkRequirements | null;
  requiresConnectivity: NetworkRequirements | null;
  certifications: CertifyDecl[];
  functions: FunctionDecl[];
  healthChecks: HealthCheckDecl[];
  healthPolicies: HealthPolicyDecl[];
  requiresCapabilities: RequiresCapabilityDecl[];
  killSwitches: KillSwitchDecl[];
  recoveryPolicies: TriggerPolicyDecl[];
  continuityPolicies: TriggerPolicyDecl[];
  mitigations: MitigationDecl[];
  decisionTrees: DecisionTreeDecl[];
  offlinePolicies: OfflinePolicyDecl[];
  missionPlans: MissionPlanDecl[];
  operatingModes: OperatingModeDecl[];
  assuranceCases: AssuranceCaseDecl[];
  knowledgeModels: KnowledgeModelDecl[];
  stateEstimators: StateEstimatorDecl[];
  anomalyDetectors: AnomalyDetectorDecl[];
  anomalyHandlers: AnomalyHandlerDecl[];
  prognostics: PrognosticsDecl[];
  resiliencePolicies: ResiliencePolicyDecl[];
  /** Top-level `safety_zone` declarations. */
  safetyZones: SafetyZoneDecl[];
  /** `geofence`, `connectivity_policy`, `tamper_policy`, `@policy`, `policy …`: named, kept as text. */
  geofences: GenericDecl[];
  connectivityPolicies: GenericDecl[];
  tamperPolicies: GenericDecl[];
  policies: GenericDecl[];
  /** `on <runtime fault> { … }` at top level (other than `on anomaly`). */
  faultHandlers: { event: string; body: Stmt[]; loc: Loc }[];
  /** Everything else the tolerant layer kept (struct, enum, trait, test, extern, message, …). */
  generic: GenericDecl[];
}
