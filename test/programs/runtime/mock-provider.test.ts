import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

import { parseProgram } from '../../../agent/programs/language/index.js';
import { ProgramRuntimeError } from '../../../agent/programs/runtime/errors.js';
import {
  mockProposal,
  promptOf,
  proposalRecord,
  scanDistance,
  validateProposal,
} from '../../../agent/programs/runtime/mock-provider.js';
import { SafetyMonitor } from '../../../agent/programs/runtime/safety-monitor.js';
import { SimRobot } from '../../../agent/programs/runtime/sim-robot.js';
import { simulateProgram, type ExecutedSimulation } from '../../../agent/programs/runtime/simulate.js';
import { startAgent } from '../../helpers/agent-harness.js';
import { REPO_ROOT } from '../../helpers/spawn-agent.js';

/** The stand-in provider (docs/program-language.md §24.4), rule by rule and then inside real runs. */

describe('mockProposal: the rules', () => {
  it('proposes (0, 0) for a prompt asking to stop, halt or wait, whatever the distance', () => {
    for (const prompt of ['stop', 'Halt now', 'please WAIT here', 'stopping at the dock', 'halted', 'waiting for the lift']) {
      for (const distance of [null, 0.1, 0.5, 3]) {
        expect(mockProposal(prompt, distance)).toEqual({ action: 'stop', linear: 0, angular: 0 });
      }
    }
    // Stop words win over turn words.
    expect(mockProposal('avoid the pallet, then stop', 5)).toEqual({ action: 'stop', linear: 0, angular: 0 });
  });

  it('proposes avoidance for turning, avoiding or obstacle prompts even with a clear scan', () => {
    expect(mockProposal('turn left at the rack', 5)).toEqual({ action: 'avoid', linear: 0.4, angular: 0.25 });
    expect(mockProposal('Avoid the forklift', 1)).toEqual({ action: 'avoid', linear: 0.3, angular: 0.25 });
    expect(mockProposal('obstacles ahead', 0.5)).toEqual({ action: 'avoid', linear: 0.15, angular: 0.25 });
    expect(mockProposal('turning', 0.2)).toEqual({ action: 'avoid', linear: 0, angular: 0.6 });
    // No scan at all counts as open space (the lidar range, 10 m).
    expect(mockProposal('avoiding', null)).toEqual({ action: 'avoid', linear: 0.4, angular: 0.25 });
    // Words that merely contain the letters do not count: `return` is not `turn`.
    expect(mockProposal('return to the charger', 1)).toEqual({ action: 'forward', linear: 0.45, angular: 0 });
  });

  it('switches to avoidance strictly below 0.8 m and turns on the spot strictly below 0.4 m', () => {
    const prompt = 'cruise';
    expect(mockProposal(prompt, 0.8)).toEqual({ action: 'forward', linear: 0.45 * 0.8, angular: 0 });
    const justInside = mockProposal(prompt, 0.7999);
    expect(justInside.action).toBe('avoid');
    expect(justInside.angular).toBe(0.25);
    expect(justInside.linear).toBeCloseTo(0.23997, 10);
    expect(mockProposal(prompt, 0.4)).toEqual({ action: 'avoid', linear: 0.3 * 0.4, angular: 0.25 });
    expect(mockProposal(prompt, 0.3999)).toEqual({ action: 'avoid', linear: 0, angular: 0.6 });
    expect(mockProposal(prompt, 0.01)).toEqual({ action: 'avoid', linear: 0, angular: 0.6 });
  });

  it('otherwise moves forward at min(0.8, 0.45 × distance) with no turn', () => {
    expect(mockProposal('', 1)).toEqual({ action: 'forward', linear: 0.45, angular: 0 });
    expect(mockProposal('cruise along the aisle', 1.5)).toEqual({ action: 'forward', linear: 0.675, angular: 0 });
    // 0.45 × 16/9 = 0.8 exactly: the cap takes over from there on.
    expect(mockProposal('go', 2)).toEqual({ action: 'forward', linear: 0.8, angular: 0 });
    expect(mockProposal('go', null)).toEqual({ action: 'forward', linear: 0.8, angular: 0 });
  });

  it('caps avoidance at 0.4 m/s linear', () => {
    expect(mockProposal('avoid', 1.3333333334).linear).toBe(0.4);
    expect(mockProposal('avoid', 1.2).linear).toBeCloseTo(0.36, 12);
  });
});

describe('the inputs of a call', () => {
  it('takes the prompt from prompt: or from every string argument', () => {
    expect(promptOf([{ name: null, value: 'go' }, { name: 'prompt', value: 'stop' }])).toBe('stop');
    expect(promptOf([{ name: null, value: 'drive on' }, { name: null, value: 3 }, { name: 'hint', value: 'then halt' }])).toBe('drive on then halt');
    expect(promptOf([{ name: null, value: { nearest_distance: 1 } }])).toBe('');
  });

  it('takes the distance from a distance argument, a scan record, or the robot’s own scanners', () => {
    const robot = new SimRobot();
    expect(scanDistance([{ name: 'distance', value: 0.3 }, { name: null, value: { nearest_distance: 2 } }], ['Lidar'], robot)).toBe(0.3);
    expect(scanDistance([{ name: 'nearest_distance', value: 0.6 }], [], robot)).toBe(0.6);
    expect(scanDistance([{ name: null, value: { nearest_distance: 2 } }], ['Lidar'], robot)).toBe(2);
    // Nothing passed: the robot's lidar in the simulated world (nearest surface 1.553 m at the start pose).
    expect(scanDistance([], ['IMU', 'Lidar'], robot)).toBeCloseTo(Math.hypot(1, 1.5) - 0.25, 10);
    // Unusable values are ignored; a robot without a scanner, or a failed one, has no distance.
    expect(scanDistance([{ name: 'distance', value: -1 }, { name: 'distance', value: 'near' }], ['IMU'], robot)).toBeNull();
    robot.failedSensorTypes.add('Lidar');
    expect(scanDistance([], ['Lidar'], robot)).toBeNull();
  });

  it('returns an unvalidated proposal record', () => {
    expect(proposalRecord('planner', { action: 'forward', linear: 0.45, angular: 0 }, 1)).toEqual({
      model: 'planner',
      provider: 'mock',
      action: 'forward',
      linear: 0.45,
      angular: 0,
      distance: 1,
      confidence: 0.9,
      proposal: true,
      validated: false,
    });
  });
});

describe('safety.validate on proposals', () => {
  const monitor = new SafetyMonitor({ maxSpeed: 0.3, maxAngular: 0.5, zones: [] });
  const robot = new SimRobot();

  it('clamps a motion proposal to the limits and says so', () => {
    const raw = proposalRecord('p', { action: 'forward', linear: 0.8, angular: 0 }, 3);
    expect(validateProposal(raw, monitor, robot)).toEqual({ ...raw, linear: 0.3, clamped: true, validated: true });
    const spin = proposalRecord('p', { action: 'avoid', linear: 0, angular: 0.6 }, 0.2);
    expect(validateProposal(spin, monitor, robot)).toMatchObject({ linear: 0, angular: 0.5, clamped: true, validated: true });
    const slow = proposalRecord('p', { action: 'avoid', linear: 0.15, angular: 0.25 }, 0.5);
    expect(validateProposal(slow, monitor, robot)).toMatchObject({ linear: 0.15, angular: 0.25, clamped: false, validated: true });
  });

  it('only marks other values', () => {
    expect(validateProposal('dock', monitor, robot)).toEqual({ action: 'dock', validated: true });
    expect(validateProposal({ action: 'grip', proposal: true }, monitor, robot)).toEqual({ action: 'grip', proposal: true, validated: true });
    expect(validateProposal({ linear: 2, angular: 0 }, null, robot)).toEqual({ linear: 2, angular: 0, validated: true });
  });
});

// ---------------------------------------------------------------------------------------------
// Whole runs, from program text of our own

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function writeProgram(source: string, name = 'planner.sd'): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'svc-mock-')));
  dirs.push(dir);
  const file = path.join(dir, name);
  fs.writeFileSync(file, source);
  return file;
}

function simulate(source: string): ExecutedSimulation {
  const file = writeProgram(source);
  return simulateProgram(parseProgram(fs.readFileSync(file, 'utf8'), file), { file, execute: true, recordTrace: true }) as ExecutedSimulation;
}

/** A rover whose loop asks the planner with PROMPT and executes the validated proposal. */
function plannerRover(prompt: string, safety = 'max_speed = 1.0 m/s;\n        max_angular = 1.0 rad/s;', extra = ''): string {
  return `
robot Mole {
    sensor lidar: Lidar on "/dev/lidar";
    actuator wheels: DifferentialDrive;
    ai_model planner: MotionPlanner { provider: "mock"; }
    safety {
        ${safety}
    }
    behavior roam() {
        loop every 100ms {
            let proposal = planner.propose("${prompt}", lidar.read());
            let safe = safety.validate(proposal);
            ${extra}
            wheels.execute(safe);
        }
    }
}
`;
}

const drives = (sim: ExecutedSimulation): string[] => sim.result.events.filter((e) => e.startsWith('drive') || e === 'stop()');

describe('AI-driven programs in simulation', () => {
  it('moves the robot forward, then turns away from the obstacle ahead', () => {
    const sim = simulate(plannerRover('cruise along the aisle'));
    // Start pose: nearest surface 1.553 m (the obstacle at (-1, 1.5)) → 0.45 × 1.553 = 0.70 m/s.
    expect(drives(sim)[0]).toBe('drive(0.70 m/s, 0.00 rad/s)');
    expect(drives(sim)).toHaveLength(20);
    // Moving away from that obstacle the nearest one is briefly farther; then the one at (2, 0) nears.
    expect(drives(sim).slice(1, 4)).toEqual(['drive(0.72 m/s, 0.00 rad/s)', 'drive(0.70 m/s, 0.00 rad/s)', 'drive(0.67 m/s, 0.00 rad/s)']);
    // Below 0.8 m from it the planner proposes avoidance: 0.25 rad/s and min(0.4, 0.3 × d).
    expect(drives(sim).slice(-3)).toEqual(['drive(0.23 m/s, 0.25 rad/s)', 'drive(0.23 m/s, 0.25 rad/s)', 'drive(0.22 m/s, 0.25 rad/s)']);
    expect(sim.result.state.pose.x).toBeCloseTo(0.96499, 5);
    // Two ticks of the turn have run (the last proposal executes after the last tick).
    expect(sim.result.state.pose.theta).toBeCloseTo(0.05, 12);
    expect(sim.result.state.emergency_stop).toBe(false);
    expect(sim.result.metrics['providers']).toEqual({ mock: { calls: 20, failures: 0 } });
    const calls = JSON.parse(fs.readFileSync(sim.trace_path!, 'utf8')).frames.filter((f: { event: string }) => f.event === 'provider_call');
    expect(calls).toHaveLength(20);
    expect(calls[0]).toMatchObject({ payload: { category: 'ai', failed: false, function: 'propose', module: 'planner', provider_key: 'mock' }, state: null });
  });

  it('keeps the robot still when the prompt asks it to wait', () => {
    const sim = simulate(plannerRover('wait for the picker'));
    expect(drives(sim)).toEqual(Array.from({ length: 20 }, () => 'stop()'));
    expect(sim.result.state).toMatchObject({ pose: { x: 0, y: 0, theta: 0 }, velocity: { linear: 0, angular: 0 }, emergency_stop: false });
  });

  it('turns on a turning prompt', () => {
    const sim = simulate(plannerRover('turn around the rack'));
    expect(drives(sim)[0]).toBe('drive(0.40 m/s, 0.25 rad/s)');
    expect(sim.result.state.pose.theta).toBeCloseTo(0.25 * 0.1 * 19, 10);
  });

  it('clamps proposals to max_speed, zone caps and max_angular before they move the robot', () => {
    const sim = simulate(
      plannerRover('cruise', 'max_speed = 0.5 m/s;\n        max_angular = 0.2 rad/s;\n        zone dock circle at (0, 0) radius 0.3 m;', 'print(safe.linear, safe.clamped);'),
    );
    // Inside the dock zone the cap is half of max_speed; outside it max_speed applies.
    expect(drives(sim)[0]).toBe('drive(0.25 m/s, 0.00 rad/s)');
    expect(sim.result.logs[0]).toBe('0.25 true');
    expect(drives(sim).filter((e) => e === 'drive(0.25 m/s, 0.00 rad/s)')).toHaveLength(13);
    // Leaving the zone (x > 0.3) the cap is max_speed.
    expect(drives(sim)[13]).toBe('drive(0.50 m/s, 0.00 rad/s)');
    expect(sim.result.logs[13]).toBe('0.5 true');
    // A turning prompt asks for 0.25 rad/s; max_angular allows 0.2.
    const turning = simulate(plannerRover('turn', 'max_speed = 0.5 m/s;\n        max_angular = 0.2 rad/s;'));
    expect(drives(turning)[0]).toBe('drive(0.40 m/s, 0.20 rad/s)');
  });

  it('lets the safety monitor stop an approved proposal (stop_if)', () => {
    const sim = simulate(plannerRover('cruise', 'max_speed = 1.0 m/s;\n        stop_if lidar.read().nearest_distance < 0.9 m;'));
    expect(sim.result.state.emergency_stop).toBe(true);
    expect(sim.result.events).toContain('emergency_stop()');
    const moved = sim.result.state.pose.x;
    expect(moved).toBeGreaterThan(0);
    // Stopped before reaching the 0.8 m avoidance distance: no avoidance move was ever executed.
    expect(drives(sim).every((e) => e.endsWith(', 0.00 rad/s)'))).toBe(true);
  });

  it('refuses to execute a proposal that skipped safety.validate()', () => {
    const source = plannerRover('cruise').replace('wheels.execute(safe);', 'wheels.execute(proposal);');
    const file = writeProgram(source);
    const run = (): unknown => simulateProgram(parseProgram(source, file), { file, execute: true });
    expect(run).toThrow(ProgramRuntimeError);
    expect(run).toThrow('wheels.execute: an AI proposal must pass safety.validate() before execute');
  });

  it('moves our example program over REST: POST /v1/programs/simulation on examples/standalone/aisle_planner.sd', async () => {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'svc-mock-agent-')));
    dirs.push(dir);
    const file = path.join(dir, 'aisle_planner.sd');
    fs.copyFileSync(path.join(REPO_ROOT, 'examples/standalone/aisle_planner.sd'), file);
    const agent = await startAgent({ programPath: file });
    try {
      const r = await agent.json('/v1/programs/simulation', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ execute: true }) });
      expect(r.status).toBe(200);
      const result = r.body.simulation.result;
      const motions = (result.events as string[]).filter((e) => e.startsWith('drive'));
      // Asked for 0.70 m/s, clamped to max_speed 0.6; slower as the obstacle nears; then the avoidance turn.
      expect(motions[0]).toBe('drive(0.60 m/s, 0.00 rad/s)');
      expect(motions.slice(-2)).toEqual(['drive(0.23 m/s, 0.25 rad/s)', 'drive(0.22 m/s, 0.25 rad/s)']);
      expect(result.state.pose.x).toBeCloseTo(0.9518, 4);
      expect(result.state.pose.theta).toBeCloseTo(0.025, 10);
      expect(result.metrics.providers).toEqual({ mock: { calls: 20, failures: 0 } });
    } finally {
      await agent.close();
    }
  });
});
