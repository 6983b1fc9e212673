/**
 * What the entity registry needs to know about the loaded program. The program parser (a separate
 * domain) fills this in; the registry never parses a program itself. Wire it through the
 * `programFacts` dependency of `EntityService` (see `runtime/agent.ts`).
 */
export interface ProgramFacts {
  /** The program file the facts come from (shown as the entities' source). */
  file: string;
  robots: ProgramRobot[];
  /** Top-level `mission_plan` declarations. */
  missionPlans: Array<{ name: string }>;
  /** `kill_switch` declarations, top-level (robot null) or of a robot (read by the autonomy reflexes). */
  killSwitches?: Array<{ name: string; robot: string | null; actions: string[] }>;
  /** `decision_tree` declarations with their layer word and `when` rules (read by the autonomy reflexes and memory). */
  decisionTrees?: Array<{ name: string; layer: string | null; rules: Array<{ condition: string; actions: string[] }> }>;
  /** Metric names of `@policy(kind: "homeostasis")` / `homeostasis_policy` declarations (empty: none declared). */
  homeostasisMetrics?: string[];
  /** Rule names of `@policy(kind: "attention")` / `attention_policy` declarations (empty: none declared). */
  attentionRules?: string[];
}

export interface ProgramRobot {
  name: string;
  /** `vendor` / `model` come from a driver clause (`sensor imu: IMU from bosch.bno055;`), when present. */
  sensors: Array<{ name: string; type: string; vendor?: string; model?: string }>;
  actuators: Array<{ name: string; type: string }>;
  /** `mission` blocks of the robot; an unnamed mission has name null. */
  missions: Array<{ name: string | null }>;
}

/** Supplies the facts of the currently loaded program, or null when no program is loaded. */
export type ProgramFactsSource = () => ProgramFacts | null;
