import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/agent-harness.js';
import { REPO_ROOT } from '../../helpers/spawn-agent.js';
import { demoProjectCli } from '../../helpers/svc-project-cli.js';

/**
 * The built `svc` binary's runtime health injection and output variants (docs/program-language.md §24.1,
 * §29): `svc sim --inject-health-faults | --inject-failure | --metrics-json | --trace-out`,
 * `svc run`, `svc readiness --runtime | --markdown | --html`, `svc replay --from`.
 * Run `npm run build` first.
 */
const { root, svc, json } = demoProjectCli('svc-cli-extra');


describe('svc sim health injection', () => {
  it('without flags the output has no health part, and --inject-health-faults adds one', () => {
    const plain = json(['sim', 'programs/patrol.sd']);
    expect(plain.code).toBe(0);
    expect(plain.body.simulation.result).not.toHaveProperty('health');
    expect(plain.body.simulation.result.state.emergency_stop).toBe(false);
    expect(svc(['sim', 'programs/patrol.sd']).stdout).not.toContain('Health:');

    const injected = json(['sim', 'programs/patrol.sd', '--inject-health-faults']);
    expect(injected.code).toBe(0);
    const health = injected.body.simulation.result.health;
    expect(health.status).toBe('Critical');
    expect(health.injected.map((f: { fault: string }) => f.fault)).toEqual(['GPSDegraded', 'CameraOffline', 'RobotHealthCritical']);
    // demo/svc.health.toml names SentinelResponse as Sentinel's policy: Degraded → degraded, Critical → safe_mode.
    expect(health.policy_actions.map((a: { status: string; action: string }) => `${a.status}: ${a.action}`)).toEqual([
      'Degraded: enter degraded',
      'Critical: enter safe_mode',
    ]);
    expect(health.kill_switches).toEqual([{ robot: 'Sentinel', name: 'FloorStop', fault: 'RobotHealthCritical' }]);
    expect(injected.body.simulation.result.state.emergency_stop).toBe(true);

    const text = svc(['sim', 'programs/patrol.sd', '--inject-health-faults']);
    expect(text.stdout).toContain('Health: Critical');
    expect(text.stdout).toContain('  injected GPSDegraded on Sentinel (Degraded, gps_quality_degraded)');
    expect(text.stdout).toContain('  kill switch FloorStop fired on Sentinel (RobotHealthCritical)');
  });

  it('the configuration adds [health.robots.<id>] inject_faults', () => {
    const project = tempDir('svc-cli-extra-cfg-');
    fs.cpSync(path.join(REPO_ROOT, 'demo'), project, { recursive: true });
    const healthToml = path.join(project, 'svc.health.toml');
    fs.writeFileSync(healthToml, fs.readFileSync(healthToml, 'utf8').replace(/(\[health\.robots\.Sentinel\][\s\S]*?)inject_faults = \[\]/, '$1inject_faults = ["LidarOffline"]'));
    const { body } = json(['sim', path.join(project, 'programs/patrol.sd'), '--inject-health-faults']);
    expect(body.simulation.result.health.injected.map((f: { fault: string; source: string }) => `${f.fault}:${f.source}`)).toEqual([
      'GPSDegraded:inject_health_faults',
      'CameraOffline:inject_health_faults',
      'RobotHealthCritical:inject_health_faults',
      'LidarOffline:config',
    ]);
  });

  it('--inject-failure gps runs the recovery policy as recovery_* trace frames', () => {
    const out = path.join(root, 'traces', 'gps.trace');
    const r = json(['sim', 'programs/patrol.sd', '--inject-failure', 'gps', '--trace-out', 'traces/gps.trace']);
    expect(r.code).toBe(0);
    const health = r.body.simulation.result.health;
    expect(health.status).toBe('Degraded');
    expect(health.injected.map((f: { fault: string }) => f.fault)).toEqual(['GPSDegraded']);
    expect(health.recovery.map((a: { action: string; executed: boolean }) => `${a.action}:${a.executed}`)).toEqual([
      'switch_to lidar_localization:false',
      'reduce_speed 0.4m/s:true',
      'enter degraded:true',
    ]);
    expect(r.body.simulation.trace_path).toBe(out);
    const trace = JSON.parse(fs.readFileSync(out, 'utf8'));
    const events = trace.frames.map((f: { event: string }) => f.event);
    expect(events.filter((e: string) => e.startsWith('recovery_'))).toEqual(['recovery_triggered', 'recovery_action', 'recovery_action', 'recovery_action']);
    expect(events.indexOf('health_fault_injected')).toBeLessThan(events.indexOf('behavior_tick'));
    // The degraded GPS fix (quality 0) lets the YardFix decision tree fire.
    expect(trace.frames.some((f: { event: string; payload: { evidence?: { tree?: string } } }) => f.event === 'decision_tree_eval' && f.payload.evidence?.tree === 'YardFix')).toBe(true);

    // The recorded injected run replays deterministically (the trace names the faults).
    const replay = svc(['replay', 'traces/gps.trace', '--deterministic']);
    expect(replay.code).toBe(0);
    expect(replay.stdout).toMatch(/MATCH \(\d+\/\d+ frames matched\)/);
  });

  it('an unknown --inject-failure is a usage error (exit 2)', () => {
    const r = svc(['sim', 'programs/patrol.sd', '--inject-failure', 'wifi']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown failure 'wifi' (known: gps, camera, lidar, imu, health)");
    expect(svc(['sim', 'programs/patrol.sd', '--inject-failure']).code).toBe(2);
  });
});

describe('svc sim output and svc run', () => {
  it('--metrics-json prints only result.metrics', () => {
    const full = json(['sim', 'programs/patrol.sd']).body;
    const r = svc(['sim', 'programs/patrol.sd', '--metrics-json']);
    expect(r.code).toBe(0);
    const metrics = JSON.parse(r.stdout);
    const volatile = (m: Record<string, unknown>) => JSON.stringify({ ...m, tasks: null });
    expect(volatile(metrics)).toBe(volatile(full.simulation.result.metrics));
    expect(metrics.execution.max_loop_iterations).toBe(20);
    expect(svc(['sim', 'programs/patrol.sd', '--metrics-json', '--json']).code).toBe(2);
  });

  it('--trace-out writes the trace there (recording implied)', () => {
    const r = svc(['sim', 'programs/patrol.sd', '--trace-out', 'out/nested/patrol-run.trace']);
    expect(r.code).toBe(0);
    const target = path.join(root, 'out/nested/patrol-run.trace');
    expect(r.stdout).toContain(`Trace written to ${target}`);
    const trace = JSON.parse(fs.readFileSync(target, 'utf8'));
    expect(trace.frames.length).toBeGreaterThan(20);
    expect(fs.existsSync(path.join(root, 'programs/patrol.trace'))).toBe(false);
  });

  it('svc run is the simulation with 10 loop iterations (20 with --verbose)', () => {
    const run = json(['run', 'programs/patrol.sd']).body;
    expect(run.simulation.status).toBe('completed');
    expect(run.simulation.result.metrics.execution).toMatchObject({ max_loop_iterations: 10, loop_iterations: 10 });
    const verbose = json(['run', 'programs/patrol.sd', '--verbose']).body;
    expect(verbose.simulation.result.metrics.execution.max_loop_iterations).toBe(20);
    const text = svc(['run', 'programs/patrol.sd']);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^Simulation completed: \d+ event\(s\)/);
    expect(svc(['run']).code).toBe(2);
  });

  it('sim-only options are refused on other commands', () => {
    expect(svc(['readiness', 'programs/patrol.sd', '--metrics-json']).code).toBe(2);
    expect(svc(['verify', 'programs/patrol.sd', '--trace-out', 'x.trace']).code).toBe(2);
  });
});

describe('svc readiness --runtime, --markdown, --html', () => {
  it('--runtime runs the program; --inject-health-faults folds the Critical status into Health', () => {
    const plain = json(['readiness', 'programs/patrol.sd']).body.report;
    expect(plain).not.toHaveProperty('runtime');
    const health = (report: { score: { factors: { factor: string; score: number }[] } }) => report.score.factors.find((f) => f.factor === 'Health')!.score;

    const runtime = json(['readiness', 'programs/patrol.sd', '--runtime']).body.report;
    expect(runtime.runtime).toEqual({ executed: true, status: 'Healthy', injected: [], emergency_stop: false, error: null });
    expect(health(runtime)).toBe(health(plain));

    const injected = json(['readiness', 'programs/patrol.sd', '--runtime', '--inject-health-faults']);
    expect(injected.code).toBe(1);
    expect(health(injected.body.report)).toBe(30);
    expect(injected.body.report.mission_ready).toBe(false);
    expect(injected.body.report.issues).toContainEqual(
      expect.objectContaining({ factor: 'Health', severity: 'High', message: "Injected fault RobotHealthCritical on robot 'Sentinel': Critical" }),
    );
    const text = svc(['readiness', 'programs/patrol.sd', '--runtime', '--inject-health-faults']);
    expect(text.stdout).toContain('Mission Ready: NO');
    expect(text.stdout).toContain("* Injected fault GPSDegraded on robot 'Sentinel': Degraded");
  });

  it('--markdown prints the verdict, the factor table and the issues', () => {
    const { body } = json(['readiness', 'programs/patrol.sd']);
    const r = svc(['readiness', 'programs/patrol.sd', '--markdown']);
    expect(r.code).toBe(body.report.mission_ready ? 0 : 1);
    const md = r.stdout;
    expect(md).toMatch(/^# Readiness: patrol\.sd\n/);
    expect(md).toContain(`**Mission ready: ${body.report.mission_ready ? 'YES' : 'NO'} — status ${body.report.status} — score ${body.report.score.total}/100`);
    expect(md).toContain('| Factor | Score | Weight | Weighted |');
    for (const f of body.report.score.factors) expect(md).toContain(`| ${f.factor} | ${f.score} | ${f.weight} | ${f.weighted} |`);
    expect(md).toContain(`| **Total** | **${body.report.score.total}** | | |`);
    expect(md).toContain('## Issues');
    for (const i of body.report.issues) expect(md).toContain(`| ${i.severity} | ${i.factor} | ${i.message.replace(/\|/g, '\\|')} |`);
  });

  it('--html prints a standalone, escaped HTML report', () => {
    const { body } = json(['readiness', 'programs/patrol.sd', '--runtime', '--inject-health-faults']);
    const r = svc(['readiness', 'programs/patrol.sd', '--html', '--runtime', '--inject-health-faults']);
    expect(r.code).toBe(1);
    const html = r.stdout;
    expect(html.startsWith('<!DOCTYPE html>\n<html lang="en">')).toBe(true);
    expect(html.trimEnd().endsWith('</html>')).toBe(true);
    expect(html).toContain('<h1>Readiness: patrol.sd</h1>');
    expect(html).toContain('class="verdict not-ready"');
    expect(html).toContain(`<td>Health</td><td class="num">30</td>`);
    expect(html).toContain('Runtime: simulated, health Critical');
    // Issue text is escaped: the quotes around the robot name become entities.
    expect(html).toContain('Injected fault RobotHealthCritical on robot &#39;Sentinel&#39;: Critical');
    expect(html).not.toContain("robot 'Sentinel'");
    expect(body.report.issues.length).toBeGreaterThan(0);
  });

  it('--markdown and --html belong to readiness; only one output at a time', () => {
    expect(svc(['verify', 'programs/patrol.sd', '--markdown']).code).toBe(2);
    expect(svc(['readiness', 'programs/patrol.sd', '--markdown', '--html']).code).toBe(2);
  });
});

describe('svc replay --from', () => {
  it('maps T+mm:ss (and milliseconds, T+hh:mm:ss) to the replay offset', () => {
    expect(svc(['sim', 'programs/patrol.sd', '--record']).code).toBe(0);
    const trace = JSON.parse(fs.readFileSync(path.join(root, 'programs/patrol.trace'), 'utf8'));
    const fromOneSecond = trace.frames.filter((f: { sim_time_ms: number }) => f.sim_time_ms >= 1000);
    expect(fromOneSecond.length).toBeGreaterThan(0);
    expect(fromOneSecond.length).toBeLessThan(trace.frames.length);

    const det = json(['replay', 'programs/patrol.trace', '--deterministic', '--from', 'T+00:01']);
    expect(det.code).toBe(0);
    expect(det.body.replay.frame_count).toBe(fromOneSecond.length);
    expect(det.body.replay.verification.ok).toBe(true);
    expect(json(['replay', 'programs/patrol.trace', '--deterministic', '--from', '1000']).body.replay.frame_count).toBe(fromOneSecond.length);
    expect(json(['replay', 'programs/patrol.trace', '--deterministic', '--from', 'T+00:00:01']).body.replay.frame_count).toBe(fromOneSecond.length);

    const playback = json(['replay', 'programs/patrol.trace', '--playback', '--from', 'T+00:01.5']).body.replay;
    expect(playback.frames_applied).toBe(trace.frames.filter((f: { sim_time_ms: number }) => f.sim_time_ms >= 1500).length);
    const last = trace.frames[trace.frames.length - 1];
    expect(playback.final_pose).toEqual(last.state.pose);

    // Past the end: nothing to compare, nothing to apply.
    expect(json(['replay', 'programs/patrol.trace', '--playback', '--from', 'T+10:00']).body.replay.frames_applied).toBe(0);
  });

  it('a malformed offset is a usage error (exit 2)', () => {
    expect(svc(['sim', 'programs/patrol.sd', '--record']).code).toBe(0);
    const r = svc(['replay', 'programs/patrol.trace', '--deterministic', '--from', 'T+1:75']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("invalid offset 'T+1:75'");
  });
});

describe('svc programs files', () => {
  it('lists the project\'s .sd files as text and JSON, the same listing as GET /v1/programs/files', () => {
    const listed = json(['programs', 'files']);
    expect(listed.code).toBe(0);
    expect(listed.body.files.map((f: { path: string }) => f.path)).toEqual(['programs/dock.sd', 'programs/patrol.sd']);
    expect(listed.body.count).toBe(2);
    const text = svc(['programs', 'files']).stdout;
    expect(text).toContain('2 program(s) under');
    expect(text).toContain(`  programs/dock.sd (${fs.statSync(path.join(root, 'programs', 'dock.sd')).size} bytes)`);
  });
});
