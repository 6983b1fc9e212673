import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { importJWK, type JWK } from 'jose';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT, SVC_BIN, spawnServe, waitForExit } from '../helpers/spawn-agent.js';

/**
 * End-to-end fixtures: a real `svc relay serve` process (embedded broker) and real `svc serve --relay`
 * agent processes (the compiled build: `npm run build` first), on loopback. Everything started here is
 * registered in `Procs` and killed (SIGKILL, by pid) by `Procs.cleanup()` in afterEach.
 */

export const RELAY_ADMIN = 'e2e-relay-admin-key-0123456789abcdef0123';

export class Procs {
  private readonly children = new Set<ChildProcess>();
  private readonly dirs: string[] = [];
  private readonly extra: (() => unknown)[] = [];

  onCleanup(fn: () => unknown): void {
    this.extra.push(fn);
  }

  tempDir(prefix: string): string {
    const d = mkdtempSync(path.join(os.tmpdir(), prefix));
    this.dirs.push(d);
    return d;
  }

  track(child: ChildProcess): ChildProcess {
    this.children.add(child);
    child.once('exit', () => this.children.delete(child));
    return child;
  }

  async cleanup(): Promise<void> {
    const all = [...this.children];
    for (const c of all) c.kill('SIGKILL');
    await Promise.all(all.map((c) => waitForExit(c)));
    this.children.clear();
    for (const fn of this.extra.splice(0)) await fn();
    for (const d of this.dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

export async function until<T>(what: string, check: () => T | Promise<T>, timeoutMs = 20_000, everyMs = 50): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown = null;
  for (;;) {
    try {
      const v = await check();
      if (v) return v as NonNullable<T>;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? ` (last error: ${(last as Error).message})` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export interface Answer {
  status: number;
  json: any;
  text: string;
}

export async function call(base: string, method: string, p: string, opts: { token?: string; body?: unknown } = {}): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (opts.token) headers['authorization'] = `Bearer ${opts.token}`;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${base}${p}`, { method, headers, ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}) });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, json, text };
}

export interface RelayProc {
  child: ChildProcess;
  baseUrl: string;
  httpPort: number;
  mqttPort: number;
  mqttUrl: string;
  stateDir: string;
  output: () => string;
}

/** `svc relay serve` on fixed ports (so it can be restarted on the same ones) and a state dir. */
export async function startRelayProc(procs: Procs, opts: { stateDir?: string; httpPort?: number; mqttPort?: number; args?: string[] } = {}): Promise<RelayProc> {
  const httpPort = opts.httpPort ?? (await freePort());
  const mqttPort = opts.mqttPort ?? (await freePort());
  const stateDir = opts.stateDir ?? procs.tempDir('svc-e2e-relay-');
  const child = procs.track(
    spawn(process.execPath, [SVC_BIN, 'relay', 'serve', '--bind', `127.0.0.1:${httpPort}`, '--mqtt-bind', `127.0.0.1:${mqttPort}`, '--state-dir', stateDir, ...(opts.args ?? [])], {
      cwd: REPO_ROOT,
      env: { PATH: process.env['PATH'] ?? '', SVC_API_KEY: RELAY_ADMIN },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`svc relay serve did not start:\n${out}`)), 15_000);
    const check = () => {
      if (/listening on http/.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`svc relay serve exited with ${code}:\n${out}`));
    });
  });
  return { child, baseUrl: `http://127.0.0.1:${httpPort}`, httpPort, mqttPort, mqttUrl: `mqtt://127.0.0.1:${mqttPort}`, stateDir, output: () => out };
}

export async function enroll(relay: RelayProc, tenant: string, agent: string, ttlSecs?: number): Promise<string> {
  const r = await call(relay.baseUrl, 'POST', '/v1/relay/enrollments', { token: RELAY_ADMIN, body: { tenant_id: tenant, agent_id: agent, ...(ttlSecs ? { ttl_secs: ttlSecs } : {}) } });
  if (r.status !== 201) throw new Error(`enrollment of ${agent}: ${r.status} ${r.text}`);
  return r.json.token as string;
}

export async function relayKey(relay: RelayProc, role: string, tenant: string): Promise<{ token: string; keyId: string }> {
  const r = await call(relay.baseUrl, 'POST', '/v1/admin/api-keys', { token: RELAY_ADMIN, body: { role, tenant_id: tenant, label: `${role}@${tenant}` } });
  if (r.status !== 201) throw new Error(`relay key ${role}@${tenant}: ${r.status} ${r.text}`);
  return { token: r.json.token, keyId: r.json.key_id };
}

export interface AgentProc {
  child: ChildProcess;
  baseUrl: string;
  adminKey: string;
  stateDir: string;
  output: () => string;
}

/** `svc serve --relay URL --enroll-token TOKEN` as a child process with its own admin key and state dir. */
export async function startAgentProc(procs: Procs, relayUrl: string, token: string, tenant: string, extraEnv: Record<string, string> = {}): Promise<AgentProc> {
  const stateDir = procs.tempDir('svc-e2e-agent-');
  const adminKey = `e2e-agent-admin-${tenant}-0123456789abcdef`;
  const a = await spawnServe(['--relay', relayUrl, '--enroll-token', token], {
    SVC_TENANT_ID: tenant,
    SVC_API_KEY: adminKey,
    SVC_CONTROL_CENTER_STATE_DIR: stateDir,
    ...extraEnv,
  });
  procs.track(a.child);
  return { ...a, adminKey, stateDir };
}

export async function relayStatus(agent: AgentProc): Promise<any> {
  const r = await call(agent.baseUrl, 'GET', '/v1/relay/status', { token: agent.adminKey });
  if (r.status !== 200) throw new Error(`GET /v1/relay/status: ${r.status} ${r.text}`);
  return r.json;
}

export async function fleetAgent(relay: RelayProc, token: string, agentId: string): Promise<any> {
  const r = await call(relay.baseUrl, 'GET', '/v1/fleet/agents', { token });
  return (r.json?.agents ?? []).find((a: any) => a.agent_id === agentId) ?? null;
}

/** A streamed platform event on the agent (EntityCreated), named by `tag` (the entity id). */
export async function emitEvent(agent: AgentProc, tag: string): Promise<void> {
  const r = await call(agent.baseUrl, 'POST', '/v1/entities/register', { token: agent.adminKey, body: { id: tag, entity_type: { custom: 'probe' }, display_name: tag } });
  if (r.status >= 300) throw new Error(`POST /v1/entities/register: ${r.status} ${r.text}`);
}

/** The relay's public JWK and private key, from its state dir (relay/keys.ts format). */
export function relayPublicJwk(stateDir: string): JWK {
  const { private_jwk: p } = JSON.parse(readFileSync(path.join(stateDir, 'relay-key.json'), 'utf8')) as { private_jwk: JWK };
  return { kty: p.kty!, crv: p.crv!, x: p.x!, alg: 'EdDSA', use: 'sig' };
}
export async function relayPrivateKey(stateDir: string): Promise<{ privateKey: any; publicKey: any }> {
  const { private_jwk: p } = JSON.parse(readFileSync(path.join(stateDir, 'relay-key.json'), 'utf8')) as { private_jwk: JWK };
  return { privateKey: await importJWK(p, 'EdDSA'), publicKey: await importJWK(relayPublicJwk(stateDir), 'EdDSA') };
}

/** `svc serve …` that may refuse to start: resolves with its exit code, or null once it listens. */
export async function runServe(args: string[], env: Record<string, string>, procs: Procs): Promise<{ code: number | null; output: string }> {
  const child = procs.track(
    spawn(process.execPath, [SVC_BIN, 'serve', '--bind', '127.0.0.1:0', ...args], { cwd: REPO_ROOT, env: { PATH: process.env['PATH'] ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] }),
  );
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`svc serve neither listened nor exited:\n${out}`)), 15_000);
    child.stdout!.on('data', () => {
      if (/listening on http/.test(out)) {
        clearTimeout(timer);
        resolve({ code: null, output: out });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, output: out });
    });
  });
}

/**
 * A TCP pass-through to 127.0.0.1:target that can be shut (connections refused, live ones cut) and
 * opened again. The listening port stays the same.
 */
export async function tcpGate(target: number): Promise<{ port: number; shut: () => void; open: () => void; freeze: () => void; close: () => Promise<void> }> {
  let isOpen = true;
  let frozen = false;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((inbound) => {
    if (!isOpen) {
      inbound.destroy();
      return;
    }
    const outbound = net.connect(target, '127.0.0.1');
    sockets.add(inbound);
    sockets.add(outbound);
    const done = () => {
      inbound.destroy();
      outbound.destroy();
      sockets.delete(inbound);
      sockets.delete(outbound);
    };
    inbound.on('error', done).on('close', done);
    outbound.on('error', done).on('close', done);
    // Not pipe(): a frozen gate drops bytes silently both ways (a partition without FIN or RST).
    inbound.on('data', (d) => frozen || outbound.write(d));
    outbound.on('data', (d) => frozen || inbound.write(d));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    port: (server.address() as net.AddressInfo).port,
    shut: () => {
      isOpen = false;
      for (const s of sockets) s.destroy();
    },
    open: () => {
      isOpen = true;
    },
    freeze: () => {
      frozen = true;
    },
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}
