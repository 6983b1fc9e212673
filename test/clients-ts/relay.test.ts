import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { ConnectionError, PermissionError, SvcClient, SvcError, type StreamHandle } from '../../clients/typescript/src/index.js';
import { startAgent, type RunningAgent } from '../helpers/agent-harness.js';
import { eventually } from '../helpers/stream-client.js';
import { createKey, enroll, startRelay, TENANT } from '../relay/relay-helpers.js';

/**
 * The client through the relay (docs/relay.md): the base URL `http://RELAY/agents/{id}` only prefixes
 * paths, the key is a relay key, and the agent decides access from the relay's on-behalf-of principal.
 * Relay and agent run in this process (the relay's embedded broker, the agent's MQTT trunk).
 */
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const WS = WebSocket as unknown as NonNullable<ConstructorParameters<typeof SvcClient>[0]['WebSocket']>;

describe('SvcClient through the relay', () => {
  it('reads, mutates, maps errors and streams alerts via http://RELAY/agents/{id}', async () => {
    const { relay, stop } = await startRelay({ requestTimeoutMs: 5000 });
    cleanups.push(stop);
    const { token } = await enroll(relay, TENANT, 'rover-1');
    const agent: RunningAgent = await startAgent({
      env: { SVC_RELAY_URL: `mqtt://127.0.0.1:${relay.mqttPort}`, SVC_RELAY_ENROLL_TOKEN: token, SVC_TENANT_ID: TENANT },
    });
    cleanups.push(() => agent.close());
    const operatorKey = await createKey(relay, 'operator', TENANT);
    const auditorKey = await createKey(relay, 'auditor', TENANT);
    const base = `${relay.baseUrl}/agents/rover-1`;
    const operator = new SvcClient({ baseUrl: base, apiKey: operatorKey, WebSocket: WS });
    await eventually(
      () => operator.getHealth().then(() => true, () => false),
      (ok) => ok,
      20_000,
      100,
    );

    const alerts: string[] = [];
    let stream: StreamHandle | null = operator.stream({ onAlert: (a) => alerts.push(JSON.stringify(a)), onError: () => undefined });
    cleanups.push(async () => stream?.close());
    await stream.ready;

    await operator.testAlert({ message: 'through the relay' });
    expect(JSON.stringify(await operator.listAlerts())).toContain('through the relay');
    await eventually(() => alerts, (l) => l.some((a) => a.includes('through the relay')), 10_000);
    stream.close();
    stream = null;

    const denied = await new SvcClient({ baseUrl: base, apiKey: auditorKey }).testAlert({ message: 'no' }).catch((e: unknown) => e as SvcError);
    expect(denied).toBeInstanceOf(PermissionError);
    expect((denied as SvcError).status).toBe(403);

    const unknownAgent = await new SvcClient({ baseUrl: `${relay.baseUrl}/agents/nobody`, apiKey: operatorKey }).getHealth().catch((e: unknown) => e as SvcError);
    expect((unknownAgent as SvcError).constructor).toBe(SvcError);
    expect([(unknownAgent as SvcError).status, (unknownAgent as SvcError).code]).toEqual([404, 'not_found']);

    // The agent goes away: the relay answers for it (agent_offline / gateway_timeout) → ConnectionError.
    await agent.close();
    const offline = await eventually(
      () => operator.getHealth().then(() => null, (e: unknown) => e as SvcError),
      (e) => e !== null,
      15_000,
      100,
    );
    expect(offline).toBeInstanceOf(ConnectionError);
    expect(['agent_offline', 'gateway_timeout', 'upstream_error']).toContain(offline!.code);
  }, 60_000);
});
