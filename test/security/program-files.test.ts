import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent } from '../../agent/runtime/agent.js';
import { tempDir } from '../helpers/agent-harness.js';

/**
 * Finding: `GET /v1/programs/source?file=.svc-control-center/admin-oidc.json` served the OIDC client
 * secret (and the keys file, the audit chain) because the default state directory lies inside the
 * project root. Program routes now read program files only (`.sd`, `.trace` where a route takes
 * traces) and never anything inside the state directory (docs/security.md §5, "Program files").
 */
const REPO = path.resolve(__dirname, '../..');
const ADMIN = 'admin-token-program-files-0123456789';
const CLIENT_SECRET = 'oidc-client-secret-must-never-be-served';

describe('program routes read program files only, never the state directory', () => {
  let agent: Agent;
  let base: string;
  let root: string;
  const get = async (p: string) => {
    const res = await fetch(base + p);
    const text = await res.text();
    return { status: res.status, text, body: JSON.parse(text) as any };
  };
  const post = async (p: string, body: unknown) => {
    const res = await fetch(base + p, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, text, body: JSON.parse(text) as any };
  };

  beforeAll(async () => {
    root = tempDir('svc-progfiles-');
    fs.cpSync(path.join(REPO, 'demo'), root, { recursive: true });
    // The default layout: cwd is the project root, the state directory `<root>/.svc-control-center`.
    agent = await Agent.create({ cwd: root, configPath: path.join(root, 'svc.toml'), env: { SVC_API_KEY: ADMIN }, bind: '127.0.0.1:0', log: () => undefined });
    base = `http://${await agent.listen()}`;
    const put = await fetch(`${base}/v1/admin/oidc`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', Authorization: `Bearer ${ADMIN}` },
      body: JSON.stringify({ issuer: 'http://127.0.0.1:9/', client_id: 'c', client_secret: CLIENT_SECRET }),
    });
    expect(put.status).toBe(200);
    await agent.services.oidc.flush();
    const state = agent.stateDir;
    expect(fs.readFileSync(path.join(state, 'admin-oidc.json'), 'utf8')).toContain(CLIENT_SECRET);
    // State files shaped like program files, and a link from the programs folder into the state directory.
    fs.copyFileSync(path.join(root, 'programs', 'patrol.sd'), path.join(state, 'planted.sd'));
    fs.writeFileSync(path.join(state, 'planted.trace'), '{}');
    fs.symlinkSync(path.join(state, 'admin-oidc.json'), path.join(root, 'programs', 'link.sd'));
    fs.symlinkSync(state, path.join(root, 'programs', 'state-link'));
  });
  afterAll(async () => {
    await agent.close();
  });

  it('source refuses every file of the state directory with 400 and never echoes a secret', async () => {
    for (const file of [
      '.svc-control-center/admin-oidc.json',
      '.svc-control-center/api-keys.json',
      '.svc-control-center/secrets.json',
      '.svc-control-center/control-center-audit-chain.jsonl',
      './.svc-control-center/../.svc-control-center/admin-oidc.json',
      path.join(agent.stateDir, 'admin-oidc.json'),
      '.svc-control-center/planted.sd',
      'programs/link.sd',
      'programs/state-link/planted.sd',
    ]) {
      const r = await get(`/v1/programs/source?file=${encodeURIComponent(file)}`);
      expect(r.status, file).toBe(400);
      expect(r.body).toMatchObject({ ok: false, code: 'bad_request' });
      expect(r.text).not.toContain(CLIENT_SECRET);
      expect(r.text).not.toContain('token_hash');
    }
    const inState = await get('/v1/programs/source?file=.svc-control-center/planted.sd');
    expect(inState.body.error).toBe("path is inside the agent's state directory: .svc-control-center/planted.sd");
  });

  it('source serves .sd files only: the manifest and other project files are 400', async () => {
    for (const file of ['svc.toml', 'README.md', 'svc.devices.toml']) {
      const r = await get(`/v1/programs/source?file=${file}`);
      expect(r.status, file).toBe(400);
      expect(r.body).toEqual({ ok: false, error: `not a .sd file: ${file}`, code: 'bad_request' });
    }
    const ok = await get('/v1/programs/source?file=programs/dock.sd');
    expect(ok.status).toBe(200);
    expect(ok.body.source).toContain('robot');
  });

  it('trace routes read .trace only and analyses .sd only, never from the state directory', async () => {
    expect((await post('/v1/programs/replay', { file: '.svc-control-center/planted.trace' })).status).toBe(400);
    expect((await post('/v1/programs/audit/decisions', { file: '.svc-control-center/planted.trace' })).status).toBe(400);
    expect((await post('/v1/programs/audit/decisions', { file: 'svc.toml' })).body.error).toBe('not a .trace file: svc.toml');
    expect((await post('/v1/programs/diagnose', { file: '.svc-control-center/planted.sd' })).status).toBe(400);
    expect((await post('/v1/programs/diagnose', { file: 'svc.toml' })).body.error).toBe('not a .sd or .trace file: svc.toml');
    expect((await post('/v1/programs/readiness', { file: '.svc-control-center/planted.sd' })).status).toBe(400);
    expect((await get('/v1/trust/program?file=.svc-control-center/planted.sd')).status).toBe(400);
    expect((await post('/v1/programs/readiness', { file: 'programs/patrol.sd' })).status).toBe(200);
  });
});
