/**
 * Stateless relay nodes (docs/relay.md § Topologies): a real `mosquitto` and two `svc relay serve
 * --mqtt-url` processes (the compiled build, bin/svc.js) sharing one state directory serve the same
 * agents. All routing state is in the broker (retained presence) or in signed tokens.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MOSQUITTO_SKIP_REASON, startMosquitto, type MosquittoBroker } from '../helpers/mosquitto.js';
import { REPO_ROOT, SVC_BIN, waitForExit } from '../helpers/spawn-agent.js';
import { ADMIN_KEY, call, echoHandler, FakeAgent, tempDir, until } from './relay-helpers.js';

interface RelayProcess {
  child: ChildProcess;
  baseUrl: string;
  output: () => string;
}

async function spawnRelay(args: string[], env: Record<string, string>): Promise<RelayProcess> {
  const child = spawn(process.execPath, [SVC_BIN, 'relay', 'serve', '--bind', '127.0.0.1:0', ...args], {
    cwd: REPO_ROOT,
    env: { PATH: process.env['PATH'] ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`svc relay serve did not start:\n${out}`)), 15_000);
    child.stdout!.on('data', () => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`svc relay serve exited with ${code}:\n${out}`));
    });
  });
  return { child, baseUrl, output: () => out };
}

const title = MOSQUITTO_SKIP_REASON ? `relay nodes on a real mosquitto — SKIPPED: ${MOSQUITTO_SKIP_REASON}` : 'relay nodes on a real mosquitto';

describe.skipIf(MOSQUITTO_SKIP_REASON !== null)(title, () => {
  let broker: MosquittoBroker;
  let state: { dir: string; remove: () => void };
  let nodeA: RelayProcess;
  let nodeB: RelayProcess;
  const agents: FakeAgent[] = [];

  beforeAll(async () => {
    broker = await startMosquitto();
    state = tempDir();
    const env = { SVC_API_KEY: ADMIN_KEY, SVC_TENANT_ID: 'acme' };
    const common = ['--mqtt-url', broker.url, '--state-dir', state.dir, '--request-timeout-ms', '2000'];
    nodeA = await spawnRelay([...common, '--node', 'node-a'], env);
    nodeB = await spawnRelay([...common, '--node', 'node-b'], env);
  });

  afterAll(async () => {
    await Promise.all(agents.map((a) => a.stop().catch(() => undefined)));
    for (const n of [nodeA, nodeB]) {
      if (n && n.child.exitCode === null) {
        n.child.kill('SIGTERM');
        await waitForExit(n.child);
      }
    }
    await broker?.dispose();
    state?.remove();
  });

  it('an agent enrolled on one node is served by both; a node that stops does not stop the other', async () => {
    const e = await call(nodeA.baseUrl, 'POST', '/v1/relay/enrollments', { token: ADMIN_KEY, body: { tenant_id: 'acme', agent_id: 'robot-m1' } });
    expect(e.status).toBe(201);
    const key = await call(nodeB.baseUrl, 'POST', '/v1/admin/api-keys', { token: ADMIN_KEY, body: { role: 'operator', tenant_id: 'acme' } });
    expect(key.status).toBe(201);
    const other = await call(nodeA.baseUrl, 'POST', '/v1/admin/api-keys', { token: ADMIN_KEY, body: { role: 'operator', tenant_id: 'globex' } });
    const agent = await FakeAgent.start(broker.url, 'acme', 'robot-m1', e.json, echoHandler);
    agents.push(agent);
    for (const n of [nodeA, nodeB]) {
      await until(async () => (await call(n.baseUrl, 'GET', '/v1/fleet/agents', { token: ADMIN_KEY })).json.agents.some((a: { agent_id: string; online: boolean }) => a.agent_id === 'robot-m1' && a.online), `robot-m1 online on ${n.baseUrl}`);
    }
    // Node B verifies node A's key (shared key file); both sign on-behalf-of tokens with the relay key.
    const viaA = await call(nodeA.baseUrl, 'GET', '/agents/robot-m1/v1/devices', { token: key.json.token });
    const viaB = await call(nodeB.baseUrl, 'GET', '/agents/robot-m1/v1/devices', { token: key.json.token });
    expect(viaA.status).toBe(200);
    expect(viaB.status).toBe(200);
    expect(viaA.json).toMatchObject({ path: '/v1/devices', obo_role: 'operator', obo_tenant: 'acme' });
    expect(viaA.headers.get('x-svc-relay-node')).toBe('node-a');
    expect(viaB.headers.get('x-svc-relay-node')).toBe('node-b');
    expect(agent.received.map((r) => r.reply_to)).toEqual(['svc/t/acme/a/robot-m1/res/node-a', 'svc/t/acme/a/robot-m1/res/node-b']);
    // Tenant isolation holds on either node.
    expect((await call(nodeB.baseUrl, 'GET', '/agents/robot-m1/v1/devices', { token: other.json.token })).status).toBe(404);
    // Stop node A: node B keeps serving.
    nodeA.child.kill('SIGTERM');
    await waitForExit(nodeA.child);
    expect((await call(nodeB.baseUrl, 'GET', '/agents/robot-m1/v1/health', { token: key.json.token })).status).toBe(200);
  });

  it('a killed agent goes offline through the broker\'s Last Will (503 agent_offline); a silent one is 504', async () => {
    const e = await call(nodeB.baseUrl, 'POST', '/v1/relay/enrollments', { token: ADMIN_KEY, body: { tenant_id: 'acme', agent_id: 'robot-m2' } });
    const a = await FakeAgent.start(broker.url, 'acme', 'robot-m2', e.json, () => null);
    agents.push(a);
    await until(async () => (await call(nodeB.baseUrl, 'GET', '/v1/fleet/agents', { token: ADMIN_KEY })).json.agents.some((x: { agent_id: string; online: boolean }) => x.agent_id === 'robot-m2' && x.online), 'online');
    const slow = await call(nodeB.baseUrl, 'GET', '/agents/robot-m2/v1/health', { token: ADMIN_KEY });
    expect(slow.status).toBe(504);
    expect(slow.json).toMatchObject({ ok: false, code: 'gateway_timeout' });
    a.kill();
    await until(async () => (await call(nodeB.baseUrl, 'GET', '/agents/robot-m2/v1/health', { token: ADMIN_KEY })).status === 503, 'offline', 6000);
  });

  it('presence is rebuilt from the broker: after a broker restart without persistence, a node forgets agents that did not come back and sees those that did', async () => {
    const e = await call(nodeB.baseUrl, 'POST', '/v1/relay/enrollments', { token: ADMIN_KEY, body: { tenant_id: 'acme', agent_id: 'robot-m3' } });
    const names = async () => (await call(nodeB.baseUrl, 'GET', '/v1/fleet/agents', { token: ADMIN_KEY })).json.agents.map((a: { agent_id: string }) => a.agent_id) as string[];
    await until(async () => (await names()).includes('robot-m1'), 'robot-m1 known');
    await broker.restart();
    await until(async () => (await names()).length === 0, 'view emptied after the broker restart', 10_000);
    const a = await FakeAgent.start(broker.url, 'acme', 'robot-m3', e.json, echoHandler);
    agents.push(a);
    await until(async () => (await names()).includes('robot-m3'), 'robot-m3 seen after the restart', 10_000);
    expect((await call(nodeB.baseUrl, 'GET', '/agents/robot-m3/v1/health', { token: ADMIN_KEY })).status).toBe(200);
  });
});
