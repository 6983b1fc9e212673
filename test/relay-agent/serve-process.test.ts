import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/agent-harness.js';
import { MOSQUITTO_SKIP_REASON, startMosquitto, type MosquittoBroker } from '../helpers/mosquitto.js';
import { REPO_ROOT, SVC_BIN, spawnServe, waitForExit } from '../helpers/spawn-agent.js';
import { enrollmentToken, relayKey, retainedPresence, TestRelay, until } from './relay-fixture.js';

/**
 * `svc serve --relay URL --enroll-token TOKEN` as a real process (the compiled build: `npm run build`
 * first): it dials out, answers a relayed request, and when it is killed the broker publishes its Last
 * Will, so the retained presence says offline.
 */
describe.skipIf(MOSQUITTO_SKIP_REASON !== null)('svc serve --relay (child process)', () => {
  let broker: MosquittoBroker;
  let key: Awaited<ReturnType<typeof relayKey>>;
  beforeAll(async () => {
    broker = await startMosquitto();
    key = await relayKey();
  });
  afterAll(async () => {
    await broker?.dispose();
  });

  it('connects, answers through the relay, and its Last Will says offline when the process is killed', async () => {
    const token = await enrollmentToken(key, 'acme', 'edge-1');
    const relay = await TestRelay.connect(broker.url, 'acme', 'edge-1');
    const agent = await spawnServe(['--relay', broker.url, '--enroll-token', token], {
      SVC_TENANT_ID: 'acme',
      SVC_CONTROL_CENTER_STATE_DIR: tempDir('svc-relay-serve-'),
    });
    try {
      await until('the trunk line', () => agent.output().includes('svc relay trunk: agent edge-1 dialling mqtt://127.0.0.1'));
      await until('online presence', () => relay.presence.find((p) => p.online));
      const health = await relay.request('GET', '/v1/health');
      expect(health!.status).toBe(200);
      expect((await fetch(`${agent.baseUrl}/v1/health`)).status).toBe(200);
      agent.child.kill('SIGKILL');
      await waitForExit(agent.child);
      const offline = await until('offline presence (Last Will)', () => relay.presence.find((p) => !p.online), 5000);
      expect(offline).toMatchObject({ agent_id: 'edge-1', tenant_id: 'acme', online: false, connected_since_ms: null });
      expect((await retainedPresence(broker.url, 'acme', 'edge-1'))!.online).toBe(false);
    } finally {
      agent.child.kill('SIGKILL');
      await relay.close();
    }
  });

  it('says offline itself on SIGTERM', async () => {
    const token = await enrollmentToken(key, 'acme', 'edge-2');
    const relay = await TestRelay.connect(broker.url, 'acme', 'edge-2');
    const agent = await spawnServe([], {
      SVC_TENANT_ID: 'acme',
      SVC_CONTROL_CENTER_STATE_DIR: tempDir('svc-relay-serve-'),
      SVC_RELAY_URL: broker.url,
      SVC_RELAY_ENROLL_TOKEN: token,
    });
    try {
      await until('online presence', () => relay.presence.find((p) => p.online));
      agent.child.kill('SIGTERM');
      expect(await waitForExit(agent.child)).toBe(0);
      await until('offline presence', () => relay.presence.find((p) => !p.online), 5000);
    } finally {
      agent.child.kill('SIGKILL');
      await relay.close();
    }
  });

  it('refuses to start with an enrollment token of another tenant, saying why', async () => {
    const token = await enrollmentToken(key, 'globex', 'edge-3');
    const child = spawn(process.execPath, [SVC_BIN, 'serve', '--bind', '127.0.0.1:0', '--relay', broker.url, '--enroll-token', token], {
      cwd: REPO_ROOT,
      env: { PATH: process.env['PATH'] ?? '', SVC_TENANT_ID: 'acme', SVC_CONTROL_CENTER_STATE_DIR: tempDir('svc-relay-serve-') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (out += d));
    const code = await waitForExit(child);
    expect(code).not.toBe(0);
    expect(out).toContain("the relay enrollment token is for tenant 'globex' but this agent's tenant is 'acme'");
    expect(out).not.toContain('listening on');
  });
});
