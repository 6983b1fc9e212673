/**
 * Hand-built programs for the assurance tests: every list present and empty, so a test states only
 * the declarations it is about.
 */
import type { Loc, Program, RobotDecl } from '../../../agent/programs/language/ast.js';

export const at = (line = 1, column = 1): Loc => ({ line, column });

export function makeRobot(overrides: Partial<RobotDecl> = {}): RobotDecl {
  return {
    name: 'Rover',
    doc: null,
    sensors: [],
    actuators: [],
    aiModels: [],
    topics: [],
    buses: [],
    usesHardware: [],
    exposes: [],
    safety: [],
    missions: [],
    behaviors: [],
    tasks: [],
    modes: [],
    watchdogs: [],
    twins: [],
    observe: [],
    verify: [],
    triggers: [],
    pipelines: [],
    stateMachines: [],
    agents: [],
    killSwitches: [],
    healthChecks: [],
    peers: [],
    hasPermissions: false,
    requiresHardware: null,
    requiresNetwork: null,
    requiresConnectivity: null,
    localDecisionAuthority: [],
    requiresCentralApproval: [],
    generic: [],
    loc: at(),
    ...overrides,
  };
}

export function makeProgram(overrides: Partial<Program> = {}): Program {
  return {
    file: 'test.sd',
    module: null,
    imports: [],
    robots: [],
    hardware: [],
    deploys: [],
    fleets: [],
    simulateFaults: [],
    requiresHardware: null,
    requiresNetwork: null,
    requiresConnectivity: null,
    certifications: [],
    functions: [],
    healthChecks: [],
    healthPolicies: [],
    requiresCapabilities: [],
    killSwitches: [],
    recoveryPolicies: [],
    continuityPolicies: [],
    mitigations: [],
    decisionTrees: [],
    offlinePolicies: [],
    missionPlans: [],
    operatingModes: [],
    assuranceCases: [],
    knowledgeModels: [],
    stateEstimators: [],
    anomalyDetectors: [],
    anomalyHandlers: [],
    prognostics: [],
    resiliencePolicies: [],
    safetyZones: [],
    geofences: [],
    connectivityPolicies: [],
    tamperPolicies: [],
    policies: [],
    faultHandlers: [],
    generic: [],
    ...overrides,
  };
}

/** A trace frame with a state-less payload. */
export function frame(sim_time_ms: number, event: string, payload: Record<string, unknown> = {}) {
  return { sim_time_ms, event, payload, state: null };
}
