import { afterEach, describe, expect, it } from 'vitest';
import { waitForExit } from '../helpers/spawn-agent.js';
import { MOSQUITTO_SKIP_REASON, startMosquitto, type MosquittoBroker } from '../helpers/mosquitto.js';
import { call, enroll, fleetAgent, Procs, relayKey, startAgentProc, startRelayProc, until } from './e2e-helpers.js';

/**
 * Stateless relay nodes with real agents (docs/relay.md § Topologies): an external `mosquitto`, two
 * `svc relay serve --mqtt-url` processes sharing one state directory, and two `svc serve --relay`
 * agents of two tenants dialled out to the broker. Either node serves either agent of the caller's
 * tenant; stopping one node leaves the other serving. Issue 14.
 */
const procs = new Procs();
let broker: MosquittoBroker | null = null;
afterEach(async () => {
  await procs.cleanup();
  await broker?.stop();
  broker = null;
});

describe.skipIf(MOSQUITTO_SKIP_REASON !== null)(`two relay nodes on one mosquitto, real agents ${MOSQUITTO_SKIP_REASON ?? ''}`, () => {
  it('both nodes serve the agents of the caller’s tenant, answers equal the agent’s own, another tenant gets 404, one node stopping leaves the other serving', async () => {
    broker = await startMosquitto();
    const stateDir = procs.tempDir('svc-e2e-relay-shared-');
    const nodeA = await startRelayProc(procs, { stateDir, args: ['--mqtt-url', broker.url, '--node', 'node-a'] });
    const nodeB = await startRelayProc(procs, { stateDir, args: ['--mqtt-url', broker.url, '--node', 'node-b'] });

    const acme = await startAgentProc(procs, broker.url, await enroll(nodeA, 'acme', 'robot-acme'), 'acme');
    const globex = await startAgentProc(procs, broker.url, await enroll(nodeB, 'globex', 'robot-globex'), 'globex');
    const acmeKey = await relayKey(nodeA, 'operator', 'acme');
    const globexKey = await relayKey(nodeB, 'operator', 'globex');

    for (const node of [nodeA, nodeB]) {
      await until(`robot-acme online at ${node.baseUrl}`, async () => (await fleetAgent(node, acmeKey.token, 'robot-acme'))?.online === true);
      await until(`robot-globex online at ${node.baseUrl}`, async () => (await fleetAgent(node, globexKey.token, 'robot-globex'))?.online === true);
    }
    const direct = await call(acme.baseUrl, 'GET', '/v1/tenant', { token: acme.adminKey });
    for (const node of [nodeA, nodeB]) {
      const relayed = await call(node.baseUrl, 'GET', '/agents/robot-acme/v1/tenant', { token: acmeKey.token });
      expect(relayed.status).toBe(200);
      expect(relayed.json).toEqual(direct.json);
      // Tenant isolation on either node: globex's key does not see acme's agent.
      expect((await call(node.baseUrl, 'GET', '/agents/robot-acme/v1/tenant', { token: globexKey.token })).status).toBe(404);
      expect((await call(node.baseUrl, 'GET', '/v1/fleet/agents', { token: globexKey.token })).json.agents.map((a: { agent_id: string }) => a.agent_id)).toEqual(['robot-globex']);
    }
    // A mutation through node B is audited on the agent under node B's caller.
    expect((await call(nodeB.baseUrl, 'POST', '/agents/robot-acme/v1/alerts/test', { token: acmeKey.token, body: { message: 'via node b' } })).status).toBe(200);
    const audit = await call(acme.baseUrl, 'GET', '/v1/audit/mutations', { token: acme.adminKey });
    expect(JSON.stringify(audit.json)).toContain(acmeKey.keyId);

    // Node A stops: node B keeps serving both agents.
    nodeA.child.kill('SIGTERM');
    await waitForExit(nodeA.child);
    expect((await call(nodeB.baseUrl, 'GET', '/agents/robot-acme/v1/health', { token: acmeKey.token })).status).toBe(200);
    expect((await call(nodeB.baseUrl, 'GET', '/agents/robot-globex/v1/health', { token: globexKey.token })).status).toBe(200);
    expect(globex.child.exitCode).toBeNull();
  });
});
