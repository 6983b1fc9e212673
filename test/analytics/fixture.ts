import fs from 'node:fs';
import path from 'node:path';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';

const REPO = path.resolve(__dirname, '..', '..');

/** A copy of the bundled demo project (demo/), so traces can be written beside its programs. */
export function demoProject(): { root: string; config: string; program: string } {
  const root = tempDir('svc-analytics-demo-');
  fs.cpSync(path.join(REPO, 'demo'), root, { recursive: true });
  return { root, config: path.join(root, 'svc.toml'), program: path.join(root, 'programs', 'patrol.sd') };
}

/** A project holding one program written by the test (`programs/<name>`), no configuration. */
export function programProject(source: string, name = 'ops.sd'): { root: string; program: string } {
  const root = tempDir('svc-analytics-prog-');
  fs.mkdirSync(path.join(root, 'programs'), { recursive: true });
  const program = path.join(root, 'programs', name);
  fs.writeFileSync(program, source);
  return { root, program };
}

/** An example program of the repository (examples/…), copied into a fresh project root. */
export function exampleProject(relative: string): { root: string; program: string } {
  return programProject(fs.readFileSync(path.join(REPO, relative), 'utf8'), path.basename(relative));
}

export function startAnalyticsAgent(options: { config?: string | null; program?: string | null; stateDir?: string; env?: Record<string, string>; grpc?: boolean; cwd?: string }): Promise<RunningAgent> {
  return startAgent({
    configPath: options.config ?? null,
    programPath: options.program ?? null,
    env: { SVC_SRE_SAMPLE_INTERVAL_SECS: '0', ...(options.env ?? {}) },
    ...(options.stateDir ? { stateDir: options.stateDir } : {}),
    ...(options.grpc ? { grpcBind: '127.0.0.1:0' } : {}),
  });
}

/** A trace file (docs/program-language.md §26): frames at 0, 500, 1000, 1500 and 2500 ms. */
export function writeTrace(file: string, source = 'patrol.sd'): void {
  const state = (x: number, estop = false) => ({ pose: { x, y: 0, theta: 0, z: 0 }, velocity: { linear: 0.5, angular: 0 }, emergency_stop: estop, active_mode: 'normal' });
  const frames = [
    { sim_time_ms: 0, event: 'mission_start', payload: { robot: 'Sentinel', recorded_at: '2026-01-01T00:00:00Z' }, state: state(0) },
    { sim_time_ms: 500, event: 'decision', payload: { version: 1, choice: 'sweep_aisles' }, state: state(1) },
    { sim_time_ms: 1000, event: 'health_check', payload: { status: 'degraded', decision: 'slow_down', recorded_at: '2026-01-01T00:00:01Z' }, state: state(2) },
    { sim_time_ms: 1500, event: 'readiness', payload: { mission_ready: true } , state: state(3) },
    { sim_time_ms: 2500, event: 'safety_stop', payload: { reason: 'kill_switch', recorded_at: '2026-01-01T00:00:03Z' }, state: state(3, true) },
  ];
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify({ version: 2, source, deterministic: true, frames }, null, 2));
}
