import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, tempDir, type RunningAgent } from '../../helpers/agent-harness.js';

/**
 * Every program route over real HTTP (docs/program-language.md §8–§23, docs/programs.md): envelopes,
 * path safety, error statuses and the Operate gate on recording simulations.
 */
const REPO = path.resolve(__dirname, '../../..');

function copyDemo(): string {
  const root = tempDir('svc-programs-');
  fs.cpSync(path.join(REPO, 'demo'), root, { recursive: true });
  fs.writeFileSync(path.join(root, 'programs', 'broken.sd'), 'robot Broken {\n  sensor lidar: Lidar\n}\n');
  fs.writeFileSync(path.join(root, 'programs', 'bad-token.sd'), 'robot R { sensor x: Lidar on "unterminated; }\n');
  return root;
}

const post = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('program routes', () => {
  let root: string;
  let agent: RunningAgent;
  const OPERATOR_KEY = 'op-key-0123456789abcdef';
  const AUDITOR_KEY = 'aud-key-0123456789abcdef';

  beforeAll(async () => {
    root = copyDemo();
    const keys = path.join(root, 'keys.json');
    fs.writeFileSync(
      keys,
      JSON.stringify([
        { key_id: 'op', token: OPERATOR_KEY, role: 'operator' },
        { key_id: 'aud', token: AUDITOR_KEY, role: 'auditor' },
      ]),
    );
    agent = await startAgent({
      configPath: path.join(root, 'svc.toml'),
      programPath: path.join(root, 'programs', 'patrol.sd'),
      env: { SVC_API_KEYS_FILE: keys },
    });
  });
  afterAll(async () => {
    await agent.close();
  });

  it('readiness answers {version, file, report} with the twelve factors, for the --program default and a relative file', async () => {
    const dflt = await agent.json('/v1/programs/readiness', post({}));
    expect(dflt.status).toBe(200);
    expect(dflt.body.version).toBe('v1');
    // Remote callers see project-relative paths only (docs/security.md §5, "Program files").
    expect(dflt.body.file).toBe('programs/patrol.sd');
    expect(JSON.stringify(dflt.body)).not.toContain(root);
    const factors = dflt.body.report.score.factors.map((f: { factor: string }) => f.factor);
    expect(factors.slice(0, 12)).toEqual([
      'Hardware', 'Capabilities', 'Health', 'Connectivity', 'Safety', 'Battery', 'Storage', 'Compute', 'Packages', 'Providers', 'Mission Requirements', 'Assurance',
    ]);
    expect(dflt.body.report.score.maximum).toBe(100);
    expect(['Ready', 'Degraded', 'NotReady']).toContain(dflt.body.report.status);
    const rel = await agent.json('/v1/programs/readiness', post({ file: 'programs/dock.sd' }));
    expect(rel.status).toBe(200);
    expect(rel.body.file).toBe('programs/dock.sd');
  });

  it('every POST program route answers its documented envelope', async () => {
    const cases: Array<[string, unknown, string[]]> = [
      ['/v1/programs/assure', {}, ['version', 'file', 'report']],
      ['/v1/programs/diagnose', {}, ['version', 'file', 'report']],
      ['/v1/programs/recovery/heal', {}, ['version', 'file', 'report']],
      ['/v1/programs/verify/hardware', {}, ['version', 'file', 'report']],
      ['/v1/programs/verify/mission', {}, ['version', 'file', 'report']],
      ['/v1/programs/verify/capabilities', { traceability: true }, ['version', 'file', 'capabilities', 'health', 'traceability']],
      ['/v1/programs/contract/verify', {}, ['version', 'file', 'report', 'passed']],
      ['/v1/programs/simulation', {}, ['version', 'file', 'simulation']],
      ['/v1/programs/explain', {}, ['version', 'file', 'mode', 'report']],
    ];
    for (const [route, body, keys] of cases) {
      const r = await agent.json(route, post(body));
      expect(r.status, route).toBe(200);
      expect(Object.keys(r.body).sort(), route).toEqual([...keys].sort());
    }
  });

  it('simulation is a dry run by default and runs the program with execute:true', async () => {
    const dry = await agent.json('/v1/programs/simulation', post({}));
    expect(dry.body.simulation).toEqual({ robot_count: 1, dry_run: true, status: 'planned' });
    const run = await agent.json('/v1/programs/simulation', post({ execute: true }));
    expect(run.status).toBe(200);
    expect(run.body.simulation).toMatchObject({ dry_run: false, status: 'completed', has_trace: false, trace_path: null });
    expect(run.body.simulation.event_count).toBeGreaterThan(0);
    expect(run.body.simulation.result.events.some((e: string) => e.startsWith('drive('))).toBe(true);
  });

  it('recording a simulation needs Operate, writes the trace, and the trace replays deterministically', async () => {
    const anon = await agent.json('/v1/programs/simulation', post({ execute: true, record_trace: true }));
    expect(anon.status).toBe(401);
    const auditor = await agent.json('/v1/programs/simulation', {
      ...post({ execute: true, record_trace: true }),
      headers: { 'content-type': 'application/json', authorization: `Bearer ${AUDITOR_KEY}` },
    });
    expect(auditor.status).toBe(403);
    const tracePath = path.join(root, 'programs', 'patrol.trace');
    expect(fs.existsSync(tracePath)).toBe(false);
    const ok = await agent.json('/v1/programs/simulation', {
      ...post({ execute: true, record_trace: true }),
      headers: { 'content-type': 'application/json', authorization: `Bearer ${OPERATOR_KEY}` },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.simulation).toMatchObject({ has_trace: true, trace_path: path.relative(root, tracePath) });
    expect(fs.existsSync(tracePath)).toBe(true);

    const inspect = await agent.json('/v1/programs/replay', post({ file: 'programs/patrol.trace' }));
    expect(inspect.status).toBe(200);
    expect(inspect.body.replay).toMatchObject({ loaded: true, deterministic: true });
    expect(inspect.body.replay.frame_count).toBeGreaterThan(0);
    const det = await agent.json('/v1/programs/replay', post({ file: 'programs/patrol.trace', deterministic: true }));
    expect(det.status).toBe(200);
    expect(det.body.replay.mode).toBe('deterministic');
    expect(det.body.replay.verification).toMatchObject({ ok: true, mismatches: [] });
    expect(det.body.replay.verification.matched).toBe(inspect.body.replay.frame_count);
    const play = await agent.json('/v1/programs/replay', post({ file: 'programs/patrol.trace', playback: true }));
    expect(play.body.replay).toMatchObject({ mode: 'playback', loaded: true });
    expect(play.body.replay.states_applied).toBeGreaterThan(0);

    const traces = await agent.json('/v1/programs/traces');
    expect(traces.status).toBe(200);
    // The project root itself is shown as '.': where the project sits on disk is not shown remotely.
    expect(traces.body.root).toBe('.');
    expect(traces.body.traces.map((t: { path: string }) => t.path)).toContain(path.join('programs', 'patrol.trace'));
    expect(traces.body.count).toBe(traces.body.traces.length);

    const audit = fs.readFileSync(agent.agent.services.audit.mutationsFile, 'utf8');
    expect(audit).toContain('/v1/programs/simulation');
  });

  it('source and trust answer GET with a file query', async () => {
    const src = await agent.json('/v1/programs/source?file=programs/dock.sd');
    expect(src.status).toBe(200);
    expect(src.body).toMatchObject({ version: 'v1', label: 'dock.sd' });
    expect(src.body.source).toBe(fs.readFileSync(path.join(root, 'programs', 'dock.sd'), 'utf8'));
    const trust = await agent.json('/v1/trust/program?file=programs/patrol.sd');
    expect(trust.status).toBe(200);
    expect(trust.body.report.score).toBeGreaterThanOrEqual(0);
    expect(trust.body.report.score).toBeLessThanOrEqual(100);
  });

  it('refuses paths that escape the project root, answers 404 for missing files and 400 with a location for parse errors', async () => {
    for (const file of ['../outside.sd', '/etc/passwd', 'programs/../../x.sd']) {
      const r = await agent.json('/v1/programs/readiness', post({ file }));
      expect(r.status, file).toBe(400);
      expect(r.body.error).toContain('escapes the project root');
    }
    const missing = await agent.json('/v1/programs/readiness', post({ file: 'programs/nope.sd' }));
    expect(missing.status).toBe(404);
    expect(missing.body.error).toBe('program not found: programs/nope.sd');
    const broken = await agent.json('/v1/programs/readiness', post({ file: 'programs/broken.sd' }));
    expect(broken.status).toBe(400);
    expect(broken.body.error).toMatch(/^parse failed: .*broken\.sd:3:1: /);
    expect(broken.body.location).toMatchObject({ line: 3, column: 1 });
    const token = await agent.json('/v1/programs/readiness', post({ file: 'programs/bad-token.sd' }));
    expect(token.status).toBe(400);
    expect(token.body.error).toMatch(/^tokenize failed: /);
    const src = await agent.json('/v1/programs/source?file=../svc.toml');
    expect(src.status).toBe(400);
  });

  it('lists the project\'s program files, the served one marked, never from hidden folders, node_modules or the state directory', async () => {
    // A state directory inside the project (the default layout) must stay invisible (docs/security.md §5).
    const stateDir = path.join(root, 'state-inside');
    fs.mkdirSync(stateDir, { recursive: true });
    fs.writeFileSync(path.join(stateDir, 'secret.sd'), 'robot S {}\n');
    for (const dir of ['.hidden', 'node_modules/pkg']) {
      fs.mkdirSync(path.join(root, dir), { recursive: true });
      fs.writeFileSync(path.join(root, dir, 'x.sd'), 'robot X {}\n');
    }
    fs.writeFileSync(path.join(root, 'programs', 'notes.txt'), 'not a program');
    const inside = await startAgent({ configPath: path.join(root, 'svc.toml'), programPath: path.join(root, 'programs', 'patrol.sd'), stateDir });
    try {
      const listed = await inside.json('/v1/programs/files');
      expect(listed.status).toBe(200);
      expect(listed.body.root).toBe('.');
      const files = listed.body.files as Array<{ path: string; size_bytes: number; modified_ms: number; served: boolean }>;
      // broken.sd and bad-token.sd are this suite's own fixtures: listed, since listing does not parse.
      expect(files.map((f) => f.path)).toEqual(['programs/bad-token.sd', 'programs/broken.sd', 'programs/dock.sd', 'programs/patrol.sd']);
      expect(files.filter((f) => f.served).map((f) => f.path)).toEqual(['programs/patrol.sd']);
      expect(files.find((f) => f.path === 'programs/dock.sd')!.size_bytes).toBe(fs.statSync(path.join(root, 'programs', 'dock.sd')).size);
      expect(listed.body.count).toBe(4);
      expect(JSON.stringify(listed.body)).not.toContain(root);
      expect((await inside.json('/v1/programs/files?limit=1')).body.files.map((f: { path: string }) => f.path)).toEqual(['programs/bad-token.sd']);
      // Every listed path is what `file` takes.
      const source = await inside.json('/v1/programs/source?file=programs/dock.sd');
      expect(source.body.source).toBe(fs.readFileSync(path.join(root, 'programs', 'dock.sd'), 'utf8'));
    } finally {
      await inside.close();
    }
  });

  it('checks the source a trace names like any other path, and rejects malformed traces', async () => {
    const write = (name: string, content: unknown) =>
      fs.writeFileSync(path.join(root, 'programs', name), typeof content === 'string' ? content : JSON.stringify(content));
    write('escape.trace', { version: 1, source: '../../../etc/hostname', deterministic: true, frames: [] });
    write('absent.trace', { version: 1, source: 'gone.sd', deterministic: true, frames: [] });
    write('junk.trace', '{"frames": 42');
    write('shape.trace', { version: 1, source: 'patrol.sd', frames: [{ event: 'x' }] });
    const escape = await agent.json('/v1/programs/replay', post({ file: 'programs/escape.trace', deterministic: true }));
    expect(escape.status).toBe(400);
    expect(escape.body.error).toContain('escapes the project root');
    const absent = await agent.json('/v1/programs/replay', post({ file: 'programs/absent.trace', deterministic: true }));
    expect(absent.status).toBe(404);
    expect(absent.body.error).toBe("program not found: programs/gone.sd (the source 'gone.sd' of the trace programs/absent.trace, relative to the trace's folder)");
    for (const name of ['junk.trace', 'shape.trace']) {
      const r = await agent.json('/v1/programs/replay', post({ file: `programs/${name}` }));
      expect(r.status, name).toBe(400);
      expect(r.body.error, name).toMatch(/^invalid trace /);
    }
    const notTrace = await agent.json('/v1/programs/replay', post({ file: 'programs/patrol.sd' }));
    expect(notTrace.status).toBe(400);
    expect(notTrace.body.error).toBe('replay needs a .trace file: programs/patrol.sd');
  });

  it('rejects malformed JSON and wrongly typed flags with 400', async () => {
    const bad = await agent.fetch('/v1/programs/readiness', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"file":' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toMatch(/^invalid JSON body: /);
    const typed = await agent.json('/v1/programs/readiness', post({ all_targets: 'yes' }));
    expect(typed.status).toBe(400);
    expect(typed.body.error).toContain('all_targets');
  });
});

describe('program routes without --program', () => {
  it('answers 400 when no file is named and the server has no program', async () => {
    const agent = await startAgent();
    try {
      const r = await agent.json('/v1/programs/readiness', post({}));
      expect(r.status).toBe(400);
      expect(r.body.error).toBe('no program file specified (set file in body or --program)');
    } finally {
      await agent.close();
    }
  });

  it('keeps /v1/programs/source behind the sensitive-read policy while analysis stays open', async () => {
    const root = copyDemo();
    const agent = await startAgent({ configPath: path.join(root, 'svc.toml'), env: { SVC_API_REQUIRE_AUTH_READS: '1' } });
    try {
      expect((await agent.json('/v1/programs/source?file=programs/dock.sd')).status).toBe(401);
      expect((await agent.json('/v1/programs/readiness', post({ file: 'programs/dock.sd' }))).status).toBe(200);
    } finally {
      await agent.close();
    }
  });
});
