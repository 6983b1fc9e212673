import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { AUDIT_CHAIN_FILE, readAuditChain } from '../../agent/audit/audit-chain.js';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/agent-harness.js';
import { REPO_ROOT, SVC_BIN, spawnServe, waitForExit } from '../helpers/spawn-agent.js';

function svc(args: string[], env: Record<string, string> = {}) {
  const stateDir = env['SVC_CONTROL_CENTER_STATE_DIR'] ?? tempDir();
  const r = spawnSync(process.execPath, [SVC_BIN, ...args], {
    cwd: REPO_ROOT,
    env: { PATH: process.env['PATH'] ?? '', SVC_CONTROL_CENTER_STATE_DIR: stateDir, ...env },
    encoding: 'utf8',
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const children: Array<{ kill: (s: NodeJS.Signals) => boolean }> = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
});

describe('svc CLI', () => {
  it('prints usage listing commands derived from the operation table', () => {
    const r = svc(['help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('svc serve');
    expect(r.stdout).toMatch(/svc instance\s+GET \/v1\/instance/);
    expect(r.stdout).toMatch(/svc alerts test\s+POST \/v1\/alerts\/test/);
    expect(svc([]).code).toBe(2);
  });

  it('runs an operation in-process against the project and prints its JSON', () => {
    const r = svc(['instance', '--config', 'demo/svc.toml', '--program', 'demo/programs/patrol.sd']);
    expect(r.code).toBe(0);
    const body = JSON.parse(r.stdout);
    expect(body).toMatchObject({ ok: true, config_loaded: true, project_name: 'Warehouse Patrol Demo' });
    expect(body.config_path).toBe('svc.toml');
    expect(body.program_path).toBe('programs/patrol.sd');
  });

  it('mutations in-process persist to the state dir and are visible to the next command', () => {
    const stateDir = tempDir();
    const env = { SVC_CONTROL_CENTER_STATE_DIR: stateDir };
    const raised = svc(['alerts', 'test', '--message', 'from the cli'], env);
    expect(raised.code).toBe(0);
    expect(JSON.parse(raised.stdout).alert.message).toBe('from the cli');
    const listed = JSON.parse(svc(['alerts', 'list'], env).stdout);
    expect(listed.alerts.map((a: { message: string }) => a.message)).toEqual(['from the cli']);
    // The in-process mutation is audited once, naming the local user; the read is not audited.
    const chain = readAuditChain(path.join(stateDir, AUDIT_CHAIN_FILE));
    const records = [...chain].filter((r) => r.event_type.endsWith('.mutation'));
    expect(records).toHaveLength(1);
    expect(records[0]!.event_type).toBe('control_center.cli.mutation');
    expect(JSON.parse(records[0]!.payload)).toMatchObject({ method: 'POST', path: '/v1/alerts/test', actor_key_id: 'local-cli', actor_role: 'Administrator' });
  });

  it('exits 2 with a clear message for usage and configuration errors', () => {
    const unknown = svc(['frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown command 'frobnicate'");
    const missing = svc(['instance', '--config', 'nowhere/svc.toml']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/configuration not found: .*nowhere\/svc\.toml/);
    const badBind = svc(['serve', '--bind', 'localhost']);
    expect(badBind.code).toBe(2);
    expect(badBind.stderr).toContain("invalid bind address 'localhost'");
    const badEnv = svc(['version'], { SVC_API_RATE_LIMIT_PER_MINUTE: 'lots' });
    expect(badEnv.code).toBe(2);
    expect(badEnv.stderr).toContain('SVC_API_RATE_LIMIT_PER_MINUTE');
    const badField = svc(['alerts', 'test', '--message', '7']);
    expect(badField.code).toBe(2);
    expect(badField.stderr).toContain('"code":"bad_request"');
  });

  it('calls a running agent over REST with --url and the SVC_API_KEY bearer', async () => {
    const key = 'c'.repeat(64);
    const stateDir = tempDir();
    const server = await spawnServe(['--config', 'demo/svc.toml'], { SVC_CONTROL_CENTER_STATE_DIR: stateDir, SVC_API_KEY: key });
    children.push(server.child);
    const remote = svc(['tenant', '--url', server.baseUrl], { SVC_CONTROL_CENTER_STATE_DIR: tempDir() });
    expect(remote.code).toBe(0);
    expect(JSON.parse(remote.stdout).tenant_id).toBe('default');
    const refused = svc(['alerts', 'test', '--url', server.baseUrl], { SVC_CONTROL_CENTER_STATE_DIR: tempDir() });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('"code":"unauthorized"');
    const allowed = svc(['alerts', 'test', '--url', server.baseUrl, '--message', 'remote'], { SVC_API_KEY: key, SVC_CONTROL_CENTER_STATE_DIR: tempDir() });
    expect(allowed.code).toBe(0);
    expect(JSON.parse(allowed.stdout).alert.message).toBe('remote');
  });

  it('svc serve shuts down cleanly on SIGTERM and flushes its state', async () => {
    const stateDir = tempDir();
    const server = await spawnServe([], { SVC_CONTROL_CENTER_STATE_DIR: stateDir });
    children.push(server.child);
    await fetch(`${server.baseUrl}/v1/version`, { headers: { 'X-Correlation-ID': 'flush-me' } });
    server.child.kill('SIGTERM');
    expect(await waitForExit(server.child)).toBe(0);
    const traces = JSON.parse(require('node:fs').readFileSync(path.join(stateDir, 'control-center-traces.json'), 'utf8'));
    expect(traces.items.some((t: { correlation_id: string }) => t.correlation_id === 'flush-me')).toBe(true);
  });
});
