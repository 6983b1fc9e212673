/**
 * Executing a health injection on the running robot (see health-injection.ts for the rules):
 * fault effects on the simulated robot, trace frames, health_policy handlers, the kill switch and
 * the recovery actions of an injected failure.
 *
 * Policy actions are stored strings (docs/program-language.md §5.1). The ones the simulator can carry out are executed:
 * `enter MODE`, `emergency_stop`, `<actuator> . <method> ( )` (no arguments) and
 * `reduce_speed V m/s` (lowers the robot's speed cap); any other action (`notify crew_lead`,
 * `switch_to lidar_localization`) is recorded with `executed: false`.
 */
import type { KillSwitchDecl } from '../language/ast.js';
import { ProgramRuntimeError } from './errors.js';
import {
  FAULT_EVENT,
  KILL_SWITCH_EVENT,
  POLICY_ACTION_EVENT,
  RECOVERY_ACTION_EVENT,
  RECOVERY_TRIGGER_EVENT,
  STATUS_EVENT,
  applicablePolicies,
  conditionMatchesFailure,
  faultSpec,
  statusesInOrder,
  worstStatus,
  type HealthOutcome,
  type InjectedStatus,
  type RobotInjection,
} from './health-injection.js';
import type { Interpreter } from './interpreter.js';
import { ActuatorRef } from './values.js';

/** Inject a robot's faults before its entry (docs/program-language.md §24.1 step 4) and record what followed. */
export function injectHealth(interp: Interpreter, injection: RobotInjection, outcome: HealthOutcome): void {
  const robot = interp.current.decl;
  const statuses: InjectedStatus[] = [];
  for (const { fault, source } of injection.faults) {
    const spec = faultSpec(fault);
    applyEffect(interp, fault);
    statuses.push(spec.status);
    const payload: Record<string, unknown> = { robot: robot.name, fault, status: spec.status, effect: spec.effect, source };
    if (source === 'inject_failure' && injection.failure !== null) payload['failure'] = injection.failure;
    interp.record(FAULT_EVENT, payload);
    interp.logs.push(`health fault injected: ${fault} (${spec.status})`);
    outcome.injected.push({ robot: robot.name, fault, status: spec.status, effect: spec.effect, source });
    // `on GPSDegraded { … }` triggers of the robot.
    interp.fireEvent(fault);
  }
  const worst = worstStatus(statuses);
  if (worst === null) return;
  interp.sim.healthStatus = worst;
  if (outcome.status === 'Healthy' || worst === 'Critical') outcome.status = worst;

  const policies = applicablePolicies(interp.program, injection.policy);
  for (const status of statusesInOrder(statuses)) {
    interp.record(STATUS_EVENT, { robot: robot.name, status, policy: injection.policy, policies: policies.map((p) => p.name) });
    for (const policy of policies) {
      for (const handler of policy.handlers) {
        if (handler.status.toLowerCase() !== status.toLowerCase()) continue;
        for (const action of handler.actions) {
          const executed = executeAction(interp, action);
          interp.record(POLICY_ACTION_EVENT, { robot: robot.name, policy: policy.name, status, action, executed });
          outcome.policy_actions.push({ robot: robot.name, policy: policy.name, status, action, executed });
        }
      }
    }
  }

  const critical = injection.faults.find((f) => faultSpec(f.fault).effect === 'health_critical');
  const killSwitch: KillSwitchDecl | undefined = robot.killSwitches[0] ?? interp.program.killSwitches[0];
  if (critical && killSwitch) {
    interp.record(KILL_SWITCH_EVENT, { robot: robot.name, name: killSwitch.name, priority: killSwitch.priority, fault: critical.fault });
    outcome.kill_switches.push({ robot: robot.name, name: killSwitch.name, fault: critical.fault });
    try {
      interp.runBody(killSwitch.body, interp.current.env.child());
    } catch (error) {
      if (!(error instanceof ProgramRuntimeError)) throw error;
      interp.logs.push(`kill switch ${killSwitch.name}: ${error.message}`);
    }
    // A kill switch always ends in the emergency stop, whatever its action block managed.
    interp.latchEmergencyStop(`kill switch ${killSwitch.name}`);
  }

  if (injection.failure !== null) runRecovery(interp, injection.failure, outcome);
}

/** The fault's effect on the simulated robot. */
function applyEffect(interp: Interpreter, fault: string): void {
  const spec = faultSpec(fault);
  const sim = interp.sim;
  if (spec.effect === 'gps_quality_degraded') sim.gpsDegraded = true;
  else if (spec.effect === 'sensor_offline' && spec.sensorType) {
    sim.failedSensorTypes.add(spec.sensorType);
    if (spec.sensorType === 'GPS') sim.failedSensorTypes.add('GNSS');
  } else if (spec.effect === 'health_critical') sim.healthStatus = 'Critical';
}

/** `recovery_policy … { on gps.lost { … } }` for an injected `gps` failure: `recovery_*` frames. */
function runRecovery(interp: Interpreter, failure: string, outcome: HealthOutcome): void {
  const robot = interp.current.decl.name;
  for (const policy of interp.program.recoveryPolicies) {
    for (const trigger of policy.triggers) {
      if (!conditionMatchesFailure(trigger.condition, failure)) continue;
      interp.record(RECOVERY_TRIGGER_EVENT, { robot, failure, policy: policy.name, condition: trigger.condition });
      for (const action of trigger.actions) {
        const executed = executeAction(interp, action);
        interp.record(RECOVERY_ACTION_EVENT, { robot, failure, policy: policy.name, condition: trigger.condition, action, executed });
        outcome.recovery.push({ robot, failure, policy: policy.name, condition: trigger.condition, action, executed });
      }
    }
  }
  // `recover from gps { … }` handlers of the robot.
  interp.fireEvent(failure);
}

/** Carry out a policy action string when the simulator can; false when it is only recorded. */
export function executeAction(interp: Interpreter, action: string): boolean {
  const text = action.trim();
  const enter = /^enter\s+([A-Za-z_][\w]*)$/.exec(text);
  if (enter) {
    interp.enterMode(enter[1]!);
    return true;
  }
  if (/^emergency_stop(\s*\(\s*\))?$/.test(text)) {
    interp.latchEmergencyStop(`policy action ${text}`);
    return true;
  }
  const call = /^([A-Za-z_]\w*)\s*\.\s*([A-Za-z_]\w*)\s*\(\s*\)$/.exec(text);
  if (call) {
    const actuator = interp.current.actuators.get(call[1]!);
    if (!actuator) return false;
    try {
      interp.callMethod(new ActuatorRef(actuator), call[2]!, [], actuator.loc);
      return true;
    } catch (error) {
      if (!(error instanceof ProgramRuntimeError)) throw error;
      interp.logs.push(`policy action ${text}: ${error.message}`);
      return false;
    }
  }
  const speed = /^reduce_speed\s+(\d+(?:\.\d+)?)\s*(m\/s)?$/.exec(text);
  if (speed) {
    const limits = interp.current.monitor.limits;
    const cap = Number(speed[1]);
    limits.maxSpeed = limits.maxSpeed === null ? cap : Math.min(limits.maxSpeed, cap);
    return true;
  }
  return false;
}
