import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type RunningAgent } from '../../helpers/agent-harness.js';
import { demoProjectCli } from '../../helpers/svc-project-cli.js';

/**
 * The program commands of the built `svc` binary (docs/program-language.md §29): text and --json output,
 * and exit codes 0 (ready / passed), 1 (not ready / failed), 2 (usage or parse error).
 */
const { root, svc, json } = demoProjectCli('svc-cli-programs');

beforeAll(() => {
  fs.writeFileSync(path.join(root, 'programs', 'broken.sd'), 'robot Broken {\n  sensor lidar: Lidar\n}\n');
});

describe('svc check', () => {
  it('prints one line per clean file and exits 0 when every file parses and type-checks', () => {
    const r = svc(['check', 'programs/patrol.sd', 'programs/dock.sd']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('✓ programs/patrol.sd — no type errors\n✓ programs/dock.sd — no type errors\n');
  });

  it('exits 2 on a parse error and names file, line and column', () => {
    const r = svc(['check', 'programs/broken.sd', 'programs/patrol.sd']);
    expect(r.code).toBe(2);
    const [bad, good] = r.stdout.trim().split('\n');
    expect(bad).toMatch(/^✗ programs\/broken\.sd — parse failed: programs\/broken\.sd:3:1: /);
    expect(good).toBe('✓ programs/patrol.sd — no type errors');
    const j = JSON.parse(svc(['check', 'programs/broken.sd', '--json']).stdout);
    expect(j[0]).toMatchObject({ file: 'programs/broken.sd', ok: false, location: { line: 3, column: 1 } });
  });

  it('exits 2 without files and for an unreadable file', () => {
    expect(svc(['check']).code).toBe(2);
    const r = svc(['check', 'programs/none.sd']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('✗ programs/none.sd — cannot read: ENOENT\n');
  });
});

describe('program commands', () => {
  it('svc readiness prints the text of docs/program-language.md §9.11 and exits by the verdict', () => {
    const { body } = json(['readiness', 'programs/patrol.sd']);
    const text = svc(['readiness', 'programs/patrol.sd']);
    expect(text.stdout).toContain(`Mission Ready: ${body.report.mission_ready ? 'YES' : 'NO'}`);
    expect(text.stdout).toContain(`Score: ${body.report.score.total}/100`);
    expect(text.stdout).toContain(`Status: ${body.report.status}`);
    expect(text.code).toBe(body.report.mission_ready ? 0 : 1);
    for (const issue of body.report.issues) expect(text.stdout).toContain(`* ${issue.message}`);
  });

  it('finds svc.toml by walking up from the program, and --config overrides it', () => {
    const walked = json(['readiness', 'programs/patrol.sd']).body;
    const none = svc(['readiness', 'programs/patrol.sd', '--config', path.join(root, 'does-not-exist.toml')]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('does-not-exist.toml');
    // demo/svc.readiness.toml sets the policy; the walked-up configuration applies it.
    expect(walked.report.policy.minimum_score).toBe(JSON.parse(svc(['readiness', 'programs/patrol.sd', '--config', 'svc.toml', '--json']).stdout).report.policy.minimum_score);
  });

  it('answers the same JSON as the REST route', async () => {
    const agent: RunningAgent = await startAgent({ configPath: path.join(root, 'svc.toml') });
    try {
      for (const [cli, route, body] of [
        [['readiness', 'programs/patrol.sd'], '/v1/programs/readiness', {}],
        [['verify', 'programs/patrol.sd', '--all-targets'], '/v1/programs/verify/hardware', { all_targets: true }],
        [['verify', 'mission', 'programs/patrol.sd'], '/v1/programs/verify/mission', {}],
        [['contract', 'verify', 'programs/patrol.sd'], '/v1/programs/contract/verify', {}],
        [['diagnose', 'programs/patrol.sd'], '/v1/programs/diagnose', {}],
      ] as const) {
        const rest = await agent.json(route, { method: 'POST', body: JSON.stringify({ ...body, file: 'programs/patrol.sd' }) });
        expect(rest.status).toBe(200);
        // The same body, except that the CLI (the local user) sees absolute paths where a remote
        // caller sees project-relative ones (docs/programs.md, "Paths in answers").
        const local = JSON.parse(JSON.stringify(json([...cli]).body).split(`${root}/`).join(''));
        expect(local, route).toEqual(rest.body);
        expect(JSON.stringify(rest.body)).not.toContain(root);
      }
    } finally {
      await agent.close();
    }
  });

  it('svc verify --capabilities, svc verify mission and svc contract verify', () => {
    const caps = json(['verify', 'programs/patrol.sd', '--capabilities', '--traceability']);
    expect(caps.body.capabilities[0].robot).toBe('Sentinel');
    expect(caps.body.traceability).not.toBeNull();
    const mission = svc(['verify', 'mission', 'programs/patrol.sd']);
    const missionJson = json(['verify', 'mission', 'programs/patrol.sd']).body;
    expect(mission.stdout).toContain(`Mission Patrol on Sentinel: ${missionJson.report[0].achievable ? 'ACHIEVABLE' : 'BLOCKED'}`);
    expect(mission.code).toBe(missionJson.report[0].achievable ? 0 : 1);
    const contract = json(['contract', 'verify', 'programs/patrol.sd']);
    expect(contract.code).toBe(contract.body.passed ? 0 : 1);
  });

  it('svc assure, diagnose, heal and trust exit by their verdicts', () => {
    const assure = json(['assure', 'programs/patrol.sd']);
    expect(assure.code).toBe(assure.body.report.passed ? 0 : 1);
    expect(svc(['assure', 'programs/patrol.sd']).stdout).toMatch(/^Assurance Report\nPassed: (true|false)\nCases: 1\n/);
    const diagnose = svc(['diagnose', 'programs/patrol.sd']);
    expect(diagnose.stdout).toMatch(/^Diagnosis Report\nPassed: true/);
    const heal = json(['heal', 'programs/patrol.sd']);
    expect(heal.code).toBe(heal.body.report.passed ? 0 : 1);
    const trust = json(['trust', 'programs/patrol.sd']);
    expect(trust.code).toBe(trust.body.report.passed ? 0 : 1);
  });

  it('svc sim --record writes a trace that svc replay --deterministic matches; playback and audit read it', () => {
    const sim = svc(['sim', '--record', 'programs/patrol.sd']);
    expect(sim.code).toBe(0);
    const trace = path.join(root, 'programs', 'patrol.trace');
    expect(sim.stdout).toContain(`Trace written to ${trace}`);
    expect(fs.existsSync(trace)).toBe(true);
    const det = svc(['replay', 'programs/patrol.trace', '--deterministic']);
    expect(det.stdout).toMatch(/: MATCH \(/);
    expect(det.code).toBe(0);
    const play = json(['replay', 'programs/patrol.trace', '--playback']);
    expect(play.body.replay.mode).toBe('playback');
    const audit = svc(['audit', 'decisions', 'programs/patrol.trace', '--explain']);
    expect(audit.code).toBe(0);
    expect(audit.stdout).toMatch(/decision\(s\) in /);
    const explain = json(['explain', 'decision', 'programs/patrol.trace']);
    expect(explain.body.mode).toBe('decision');

    // A tampered trace no longer matches: exit 1.
    const t = JSON.parse(fs.readFileSync(trace, 'utf8'));
    t.frames[0].event = 'tampered_event';
    fs.writeFileSync(trace, JSON.stringify(t));
    const bad = svc(['replay', 'programs/patrol.trace', '--deterministic']);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain('MISMATCH');
  });

  it('svc explain takes a mode word', () => {
    const r = json(['explain', 'readiness', '--file', 'programs/patrol.sd']);
    expect(r.body.mode).toBe('readiness');
    expect(r.body.report.sections[0].summary).toMatch(/^Mission (ready with score|not ready — score) \d+\/100$/);
  });

  it('exits 2 for a missing file, a parse error, a missing argument and an unknown flag', () => {
    const missing = svc(['readiness', 'programs/nope.sd']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('program not found: ');
    const broken = svc(['readiness', 'programs/broken.sd']);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(/parse failed: .*broken\.sd:3:1/);
    expect(svc(['readiness']).code).toBe(2);
    expect(svc(['readiness', 'programs/patrol.sd', '--bogus']).code).toBe(2);
  });
});

afterAll(() => {
  fs.rmSync(root, { recursive: true, force: true });
});
