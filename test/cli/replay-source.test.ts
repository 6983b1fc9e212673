import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';
import { REPO_ROOT, SVC_BIN } from '../helpers/spawn-agent.js';

/**
 * A trace's relative `source` is resolved against the trace's own folder (docs/program-language.md
 * §17, §26), by `svc replay` from any working directory and by the REST route inside the project
 * root. Runs the built `svc` (`npm run build` first).
 */
const project = tempDir('svc-replay-src-');
const elsewhere = tempDir('svc-replay-cwd-');
const stateDir = tempDir('svc-replay-state-');

function svc(args: string[], cwd: string) {
  const r = spawnSync(process.execPath, [SVC_BIN, ...args], {
    cwd,
    env: { PATH: process.env['PATH'] ?? '', SVC_CONTROL_CENTER_STATE_DIR: stateDir },
    encoding: 'utf8',
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const post = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

beforeAll(() => {
  fs.mkdirSync(path.join(project, 'programs'));
  fs.writeFileSync(path.join(project, 'svc.toml'), '[project]\nname = "Replay Source"\n');
  fs.copyFileSync(path.join(REPO_ROOT, 'examples/standalone/line_follower.sd'), path.join(project, 'programs', 'follower.sd'));
  // A decoy with the trace's relative source name in the working directory: a different program
  // (other loop period), which a lookup against the working directory would replay and mismatch.
  fs.mkdirSync(path.join(elsewhere, 'programs'));
  const decoy = 'robot Decoy {\n  sensor lidar: Lidar;\n  actuator wheels: DifferentialDrive;\n  behavior main() {\n    loop every 7ms {\n      wheels.stop();\n    }\n  }\n}\n';
  fs.writeFileSync(path.join(elsewhere, 'follower.sd'), decoy);
  // Two traces: one beside the program (source "follower.sd"), one in a sub-folder ("../programs/follower.sd").
  expect(svc(['sim', 'programs/follower.sd', '--record'], project).code).toBe(0);
  expect(svc(['sim', 'programs/follower.sd', '--trace-out', 'traces/follower.trace'], project).code).toBe(0);
});

describe('replay resolves a relative trace source against the trace folder', () => {
  it('writes the sources relative to each trace', () => {
    expect(JSON.parse(fs.readFileSync(path.join(project, 'programs/follower.trace'), 'utf8')).source).toBe('follower.sd');
    expect(JSON.parse(fs.readFileSync(path.join(project, 'traces/follower.trace'), 'utf8')).source).toBe('../programs/follower.sd');
  });

  it('svc replay --deterministic works from another working directory, whatever lies there', () => {
    const program = path.join(fs.realpathSync(project), 'programs', 'follower.sd');
    for (const trace of ['programs/follower.trace', 'traces/follower.trace']) {
      const frames = JSON.parse(fs.readFileSync(path.join(project, trace), 'utf8')).frames.length;
      const r = svc(['replay', path.relative(elsewhere, path.join(fs.realpathSync(project), trace)), '--deterministic'], elsewhere);
      expect(r.stderr).toBe('');
      expect(r.stdout).toBe(`Deterministic replay of ${program}: MATCH (${frames}/${frames} frames matched)\n`);
      expect(r.code).toBe(0);
    }
  });

  it('a missing source exits 2 naming the path looked for and the trace', () => {
    const copy = tempDir('svc-replay-missing-');
    fs.copyFileSync(path.join(project, 'programs/follower.trace'), path.join(copy, 'orphan.trace'));
    const r = svc(['replay', path.join(copy, 'orphan.trace'), '--deterministic'], elsewhere);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      `svc: program not found: ${path.join(copy, 'follower.sd')} (the source 'follower.sd' of the trace ${path.join(copy, 'orphan.trace')}, relative to the trace's folder)\n`,
    );
  });
});

describe('the REST replay route resolves the same way, inside the project root', () => {
  let agent: RunningAgent;
  beforeAll(async () => {
    agent = await startAgent({ configPath: path.join(project, 'svc.toml') });
  });
  afterAll(async () => {
    await agent.close();
  });

  it('replays a trace in a sub-folder whose source climbs to a sibling folder', async () => {
    const r = await agent.json('/v1/programs/replay', post({ file: 'traces/follower.trace', deterministic: true }));
    expect(r.status).toBe(200);
    expect(r.body.replay.source).toBe('programs/follower.sd');
    expect(r.body.replay.verification).toMatchObject({ ok: true, mismatches: [] });
  });

  it('a missing source is a 404 naming both paths relative to the project root', async () => {
    fs.mkdirSync(path.join(project, 'old'), { recursive: true });
    fs.copyFileSync(path.join(project, 'programs/follower.trace'), path.join(project, 'old/follower.trace'));
    const r = await agent.json('/v1/programs/replay', post({ file: 'old/follower.trace', deterministic: true }));
    expect(r.status).toBe(404);
    expect(r.body.error).toBe("program not found: old/follower.sd (the source 'follower.sd' of the trace old/follower.trace, relative to the trace's folder)");
  });

  it('a source leading out of the project root is a 400 that names no absolute path', async () => {
    fs.writeFileSync(path.join(project, 'old/out.trace'), JSON.stringify({ version: 1, source: '../../follower.sd', deterministic: true, frames: [] }));
    const r = await agent.json('/v1/programs/replay', post({ file: 'old/out.trace', deterministic: true }));
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('path escapes the project root: ../follower.sd');
  });
});
