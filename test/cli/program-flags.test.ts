import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/agent-harness.js';
import { demoProjectCli } from '../helpers/svc-project-cli.js';
import { projectCli } from '../helpers/svc-project-cli.js';

/**
 * The program command flags and section commands of docs/program-language.md §29 (docs/programs.md,
 * "The CLI"), run through the built `svc` (`npm run build` first): exact text, exit codes, and exit 2
 * with a clear message for a wrong flag or value.
 */
const FIXTURES = path.join(__dirname, 'fixtures');
const { root: dir, svc, json } = projectCli('svc-cli-flags', FIXTURES);
const demo = demoProjectCli('svc-cli-flags-demo');

const COURIER_ISSUES = [
  'Issues:',
  "* Mission 'Deliver' needs 5 Wh of YardCart battery capacity 120 Wh (margin 95.83%)",
  "* Anomaly detector 'MotorHeat' has no 'on anomaly' handler",
  '* Anomaly detectors declared but no mitigation',
];

beforeAll(() => {
  // A robot with a mission but no GPS: the minimum capabilities of §9.8 fail.
  fs.writeFileSync(
    path.join(dir, 'blind.sd'),
    'robot Blind {\n  sensor lidar: Lidar;\n  actuator wheels: DifferentialDrive;\n  safety { max_speed = 0.5 m/s; }\n  mission Sweep { duration: 10 min; sweep; }\n}\n',
  );
});

describe('svc readiness --strict --policy --agent-json --baseline', () => {
  it('--strict fails a mission-ready program that still has warnings', () => {
    const plain = svc(['readiness', 'courier.sd']);
    expect(plain.code).toBe(0);
    const strict = svc(['readiness', 'courier.sd', '--strict']);
    expect(strict.stdout).toBe(['Mission Ready: YES', 'Score: 94/100', 'Status: Degraded', '', ...COURIER_ISSUES, 'Strict: FAIL (3 warning(s))', ''].join('\n'));
    expect(strict.code).toBe(1);
    // --json stays the REST body; only the exit code follows --strict.
    const body = json(['readiness', 'courier.sd', '--strict']);
    expect(body.code).toBe(1);
    expect(body.body).toEqual(json(['readiness', 'courier.sd']).body);
  });

  it('--policy FILE replaces the minimum score and weights it names; strict = true in it acts as --strict', () => {
    fs.writeFileSync(path.join(dir, 'policy.toml'), 'minimum_score = 95\n[weights]\nassurance = 0\n');
    const r = json(['readiness', 'courier.sd', '--policy', 'policy.toml']);
    expect(r.code).toBe(0);
    expect(r.body.report.policy.minimum_score).toBe(95);
    expect(r.body.report.policy.weights).toMatchObject({ assurance: 0, hardware: 12 });
    expect(r.body.report.score.total).toBe(95);
    fs.writeFileSync(path.join(dir, 'strict.json'), JSON.stringify({ readiness: { strict: true } }));
    const strict = svc(['readiness', 'courier.sd', '--policy', 'strict.json']);
    expect(strict.code).toBe(1);
    expect(strict.stdout.endsWith('Strict: FAIL (3 warning(s))\n')).toBe(true);
  });

  it('a bad policy file is a usage error naming the problem', () => {
    fs.writeFileSync(path.join(dir, 'bad.toml'), 'minimum_score = 80\nbogus = 1\n');
    expect(svc(['readiness', 'courier.sd', '--policy', 'bad.toml'])).toMatchObject({
      code: 2,
      stdout: '',
      stderr: `svc: ${path.join(dir, 'bad.toml')}: unknown readiness policy key 'bogus' (known: minimum_score, weights, strict)\n`,
    });
    fs.writeFileSync(path.join(dir, 'weights.toml'), '[weights]\nspeed = 4\n');
    expect(svc(['readiness', 'courier.sd', '--policy', 'weights.toml']).stderr).toContain("unknown weight 'speed' (known: hardware, capabilities,");
    fs.writeFileSync(path.join(dir, 'score.toml'), 'minimum_score = 140\n');
    expect(svc(['readiness', 'courier.sd', '--policy', 'score.toml']).stderr).toContain('minimum_score must be a number from 0 to 100');
    const missing = svc(['readiness', 'courier.sd', '--policy', 'none.toml']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`readiness policy file not found: ${path.join(dir, 'none.toml')}`);
    expect(svc(['readiness', 'courier.sd', '--policy']).stderr).toBe('svc: --policy needs a value\n');
  });

  it('--agent-json prints the verdict for automation', () => {
    const r = svc(['readiness', 'courier.sd', '--agent-json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      version: 'v1',
      command: 'readiness',
      file: path.join(fs.realpathSync(dir), 'courier.sd'),
      ready: true,
      strict: false,
      status: 'Degraded',
      score: 94,
      minimum_score: 80,
      target: 'YardCart',
      robots: ['Courier'],
      blocking: [],
      warnings: [
        { factor: 'Battery', severity: 'Low', message: "Mission 'Deliver' needs 5 Wh of YardCart battery capacity 120 Wh (margin 95.83%)", action: null },
        { factor: 'Assurance', severity: 'Medium', message: "Anomaly detector 'MotorHeat' has no 'on anomaly' handler", action: "Add 'on anomaly MotorHeat severity … { … }'" },
        { factor: 'Assurance', severity: 'Medium', message: 'Anomaly detectors declared but no mitigation', action: 'Declare a mitigation for the detected conditions' },
      ],
      next_actions: ["Add 'on anomaly MotorHeat severity … { … }'", 'Declare a mitigation for the detected conditions'],
      exit_code: 0,
    });
    expect(JSON.parse(svc(['readiness', 'courier.sd', '--agent-json', '--strict']).stdout)).toMatchObject({ ready: false, strict: true, exit_code: 1 });
    expect(svc(['readiness', 'courier.sd', '--agent-json', '--json'])).toMatchObject({ code: 2, stderr: 'svc: choose one output: --json or --agent-json\n' });
  });

  it('--baseline DIR turns configuration drift since the saved project into readiness issues', () => {
    const baseline = tempDir('svc-cli-baseline-');
    for (const f of fs.readdirSync(demo.root)) if (f.endsWith('.toml') || f === 'layers') fs.cpSync(path.join(demo.root, f), path.join(baseline, f), { recursive: true });
    const same = demo.svc(['readiness', 'programs/patrol.sd', '--baseline', baseline]);
    expect(same.code).toBe(0);
    expect(same.stdout).not.toContain('Drift since baseline');
    const assurance = path.join(demo.root, 'svc.assurance.toml');
    const original = fs.readFileSync(assurance, 'utf8');
    fs.writeFileSync(assurance, original.replace('minimum_score = 70', 'minimum_score = 60'));
    try {
      const drifted = demo.svc(['readiness', 'programs/patrol.sd', '--baseline', baseline]);
      expect(drifted.code).toBe(1);
      expect(drifted.stdout).toContain(
        `* Drift since baseline ${baseline}: ~ assurance.minimum_score: 70 -> 60\n* Drift since baseline ${baseline}: assurance.minimum_score changed: 70 -> 60\n`,
      );
      const issues = demo.json(['readiness', 'programs/patrol.sd', '--baseline', baseline]).body.report.issues;
      expect(issues.filter((i: { factor: string }) => i.factor === 'Configuration').map((i: { severity: string }) => i.severity)).toEqual(['Medium', 'High']);
      // explain --baseline adds the drift section of the program mode (docs/program-language.md §22).
      const explained = demo.svc(['explain', 'programs/patrol.sd', '--baseline', baseline]);
      expect(explained.stdout.endsWith(
        `## drift\n2 drift finding(s) since the baseline ${baseline} (2 medium or worse)\n  - [medium] configuration: ~ assurance.minimum_score: 70 -> 60\n  - [high] policy: assurance.minimum_score changed: 70 -> 60\n`,
      )).toBe(true);
    } finally {
      fs.writeFileSync(assurance, original);
    }
    expect(demo.svc(['explain', 'readiness', 'programs/patrol.sd', '--baseline', baseline]).stderr).toBe(
      "svc: --baseline adds the drift section of the program explanation, not of mode 'readiness'\n",
    );
    expect(demo.svc(['readiness', 'programs/patrol.sd', '--baseline', 'nowhere'])).toMatchObject({
      code: 2,
      stderr: `svc: --baseline needs a directory holding the saved project (its svc.toml): ${path.join(demo.root, 'nowhere')}\n`,
    });
    expect(svc(['readiness', 'courier.sd', '--baseline', '.'])).toMatchObject({
      code: 2,
      stderr: 'svc: --baseline compares project configurations, and this program has none (no svc.toml above it; give --config)\n',
    });
  });
});

describe('svc check --readiness-json', () => {
  it('adds the readiness REST body to each file that parsed', () => {
    const r = svc(['check', 'courier.sd', '--readiness-json']);
    expect(r.code).toBe(0);
    const [result] = JSON.parse(r.stdout);
    expect(result).toMatchObject({ file: 'courier.sd', ok: true });
    expect(result.readiness).toEqual(json(['readiness', 'courier.sd']).body);
    expect(svc(['check', 'courier.sd', '--config', 'x.toml']).stderr).toBe("svc: --config is an option of 'svc check --readiness-json'\n");
    expect(svc(['check', 'courier.sd', '--strict']).stderr).toBe('svc: unknown option --strict for check (options: --json, --readiness-json, --config FILE)\n');
  });
});

describe('svc verify --strict-certify --health --minimum-capabilities, svc compatibility', () => {
  it('--strict-certify refuses a deploy without certification', () => {
    const r = svc(['verify', 'courier.sd', '--strict-certify']);
    expect(r.code).toBe(1);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toBe('Hardware compatible: NO (target YardCart)');
    expect(lines.slice(-2)).toEqual([
      '[error] certification: Deploy targets declared without certification metadata — add a certify block (e.g. certify ISO3691_4 { level PLd; })',
      'Deployment not compatible: certification: Deploy targets declared without certification metadata — add a certify block (e.g. certify ISO3691_4 { level PLd; })',
    ]);
    expect(json(['verify', 'courier.sd', '--strict-certify']).body.report.compatible).toBe(false);
    expect(svc(['compatibility', 'courier.sd']).stdout).toBe(svc(['verify', 'courier.sd']).stdout);
  });

  it('--health and --minimum-capabilities add their checks to the capabilities verification', () => {
    const r = svc(['verify', 'courier.sd', '--health', '--minimum-capabilities']);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n').slice(-5)).toEqual([
      'Health: Healthy',
      'Health checks: 1, overall Healthy',
      '  [Unknown] CartVitals: battery.level >= 20 % is evaluated at runtime',
      'Minimum capabilities: PASS',
      '',
    ]);
    const blind = svc(['verify', 'blind.sd', '--capabilities', '--minimum-capabilities']);
    expect(blind.code).toBe(1);
    expect(blind.stdout).toContain("Minimum capabilities: FAIL\n  [error] Mission requires gps_navigation. Robot 'Blind' lacks minimum hardware.\n");
    const body = json(['verify', 'blind.sd', '--minimum-capabilities']).body;
    expect(Object.keys(body)).toEqual(['version', 'file', 'capabilities', 'health', 'traceability', 'minimum_capabilities']);
    expect(body.minimum_capabilities.compatible).toBe(false);
  });
});

describe('svc sim --trace-scheduler', () => {
  it('prints the multiplexed scheduler of the run, or says it was not used', () => {
    const dock = demo.svc(['sim', 'programs/dock.sd', '--trace-scheduler']);
    expect(dock.code).toBe(0);
    expect(dock.stdout.trim().split('\n').slice(-3)).toEqual([
      'Scheduler: 2 multiplexed task(s), base tick 50 ms, 20 tick(s), 0 emergency stop(s)',
      '  task bay_report: every 1000 ms; 1 run(s), 0 skipped, 0 deadline miss(es), 0 budget violation(s), 0 jitter violation(s)',
      '  task square_up: every 50 ms (deadline 20 ms); 20 run(s), 0 skipped, 0 deadline miss(es), 0 budget violation(s), 0 jitter violation(s)',
    ]);
    expect(svc(['sim', 'courier.sd', '--trace-scheduler']).stdout.endsWith('\nScheduler: not used (no multiplexed tasks; the entry ran alone)\n')).toBe(true);
  });
});

describe('svc replay --at --inspect --show-faults --wall-clock', () => {
  beforeAll(() => {
    expect(svc(['sim', 'courier.sd', '--record']).code).toBe(0);
    expect(demo.svc(['sim', 'programs/patrol.sd', '--inject-failure', 'gps', '--trace-out', 'gps.trace']).code).toBe(0);
  });

  it('--at T shows the frame and robot state at that simulated time', () => {
    const trace = JSON.parse(fs.readFileSync(path.join(dir, 'courier.trace'), 'utf8'));
    const at = trace.frames[2];
    expect(at.sim_time_ms).toBe(400);
    const r = svc(['replay', 'courier.trace', '--at', 'T+00:00.5']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      [
        `Trace of courier.sd: ${trace.frames.length} frame(s), deterministic: true`,
        'At 500 ms: frame #2 behavior_tick at 400 ms',
        `  pose: x=${at.state.pose.x} y=${at.state.pose.y} theta=${at.state.pose.theta}`,
        `  velocity: linear=${at.state.velocity.linear} angular=${at.state.velocity.angular}`,
        '  emergency stop: false; mode: normal',
        '',
      ].join('\n'),
    );
    const body = json(['replay', 'courier.trace', '--at', '500']).body;
    expect(body.at).toEqual({ requested_ms: 500, frame: { index: 2, sim_time_ms: 400, event: 'behavior_tick' }, state: at.state, first_frame_ms: 0 });
    expect(svc(['replay', 'courier.trace', '--at', 'soon'])).toMatchObject({
      code: 2,
      stderr: "svc: --at: invalid offset 'soon': expected milliseconds, T+mm:ss or T+hh:mm:ss\n",
    });
  });

  it('--inspect lists the frames from --from; --show-faults the fault and recovery frames', () => {
    const r = svc(['replay', 'courier.trace', '--inspect', '--from', '3800']);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n').slice(1)).toEqual([
      'Frames from 3800 ms: 2',
      '  #19 3800 ms behavior_tick {"sim_time_ms":3800,"interval_ms":200,"iteration":19}',
      '  #20 4000 ms behavior_tick {"sim_time_ms":4000,"interval_ms":200,"iteration":20}',
      '',
    ]);
    const faults = demo.svc(['replay', 'gps.trace', '--show-faults']);
    expect(faults.code).toBe(0);
    const lines = faults.stdout.trim().split('\n');
    expect(lines[1]).toBe('Faults: 6');
    expect(lines[2]).toBe('  #1 0 ms health_fault_injected {"robot":"Sentinel","fault":"GPSDegraded","status":"Degraded","effect":"gps_quality_degraded","source":"inject_failure","failure":"gps"}');
    expect(lines.slice(2).map((l) => l.trim().split(' ')[3])).toEqual(['health_fault_injected', 'health_status', 'recovery_triggered', 'recovery_action', 'recovery_action', 'recovery_action']);
    expect(svc(['replay', 'courier.trace', '--show-faults']).stdout.endsWith('\nFaults: 0\n')).toBe(true);
    expect(svc(['replay', 'courier.trace', '--inspect', '--deterministic'])).toMatchObject({
      code: 2,
      stderr: 'svc: --inspect lists the recorded frames; it does not combine with --deterministic or --playback\n',
    });
  });

  it('--wall-clock paces a playback by the simulated time between frames', () => {
    const started = Date.now();
    const r = svc(['replay', 'courier.trace', '--playback', '--wall-clock', '--from', '3400']);
    const elapsed = Date.now() - started;
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n').slice(0, 3)).toEqual([
      '#17 3400 ms behavior_tick {"sim_time_ms":3400,"interval_ms":200,"iteration":17}',
      '#18 3600 ms behavior_tick {"sim_time_ms":3600,"interval_ms":200,"iteration":18}',
      '#19 3800 ms behavior_tick {"sim_time_ms":3800,"interval_ms":200,"iteration":19}',
    ]);
    expect(r.stdout).toContain('Playback: 4 frame(s), 4 state(s) applied\n');
    expect(elapsed).toBeGreaterThanOrEqual(600);
    // With --json only the body is printed (the pacing stays silent).
    const body = json(['replay', 'courier.trace', '--playback', '--wall-clock', '--from', '3800']).body;
    expect(body.replay).toMatchObject({ mode: 'playback', frames_applied: 2 });
    expect(svc(['replay', 'courier.trace', '--wall-clock', '--deterministic'])).toMatchObject({
      code: 2,
      stderr: 'svc: --wall-clock paces a playback: use it with --playback\n',
    });
  });
});

describe('svc trust --format --project', () => {
  it('--format text|json|markdown chooses the output', () => {
    const text = svc(['trust', 'courier.sd']);
    expect(svc(['trust', 'courier.sd', '--format', 'text']).stdout).toBe(text.stdout);
    expect(JSON.parse(svc(['trust', 'courier.sd', '--format', 'json']).stdout)).toEqual(json(['trust', 'courier.sd']).body);
    const md = svc(['trust', 'courier.sd', '--format', 'markdown']);
    expect(md.code).toBe(text.code);
    const report = json(['trust', 'courier.sd']).body.report;
    expect(md.stdout.split('\n').slice(0, 6)).toEqual([
      '# Trust: courier.sd',
      '',
      `**Score ${report.score}/100 — ${report.tier} — integrity ${report.integrity_status} — passed: ${report.passed ? 'YES' : 'NO'}**`,
      '',
      '| Category | Score | Weight | Weighted |',
      '|---|---:|---:|---:|',
    ]);
    expect(svc(['trust', 'courier.sd', '--format', 'xml'])).toMatchObject({ code: 2, stderr: "svc: --format must be one of text, json, markdown (got 'xml')\n" });
    expect(svc(['trust', 'courier.sd', '--format', 'json', '--json'])).toMatchObject({ code: 2, stderr: 'svc: choose one output: --json or --format\n' });
  });

  it('--project DIR evaluates against that project, from any working directory', () => {
    const elsewhere = tempDir('svc-cli-trust-cwd-');
    const program = path.join(demo.root, 'programs/patrol.sd');
    const byProject = demo.svc(['trust', program, '--project', demo.root, '--json'], elsewhere);
    expect(byProject.code, byProject.stderr).toBeLessThan(2);
    const byConfig = demo.svc(['trust', program, '--config', path.join(demo.root, 'svc.toml'), '--json'], elsewhere);
    expect(JSON.parse(byProject.stdout)).toEqual(JSON.parse(byConfig.stdout));
    expect(demo.svc(['trust', program, '--project', 'nowhere'], elsewhere)).toMatchObject({ code: 2, stderr: `svc: --project needs a project directory: ${path.join(elsewhere, 'nowhere')}\n` });
    expect(demo.svc(['trust', program, '--project', demo.root, '--config', 'svc.toml']).stderr).toBe('svc: give --project DIR or --config FILE, not both\n');
  });
});

describe('flags of another command are usage errors', () => {
  it('names the command the flag belongs to', () => {
    expect(svc(['trust', 'courier.sd', '--strict'])).toMatchObject({ code: 2, stderr: "svc: --strict is an option of 'svc readiness'\n" });
    expect(svc(['sim', 'courier.sd', '--at', '5'])).toMatchObject({ code: 2, stderr: "svc: --at is an option of 'svc replay'\n" });
    expect(svc(['readiness', 'courier.sd', '--trace-scheduler'])).toMatchObject({ code: 2, stderr: "svc: --trace-scheduler is an option of 'svc sim' and 'svc run'\n" });
    expect(svc(['verify', 'courier.sd', '--capabilities', '--strict-certify'])).toMatchObject({ code: 2, stderr: "svc: --strict-certify is an option of 'svc verify'\n" });
    expect(svc(['heal', 'courier.sd', '--health'])).toMatchObject({ code: 2, stderr: "svc: --health is an option of 'svc verify --capabilities'\n" });
    expect(svc(['heal', 'courier.sd', '--bogus'])).toMatchObject({ code: 2, stderr: "svc: unknown option --bogus for 'heal'\n" });
  });
});
