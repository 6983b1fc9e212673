import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { RunningAgent } from '../helpers/agent-harness.js';
import { call, createKey, enroll, startRelay, TENANT, until } from '../relay/relay-helpers.js';
import type { Relay } from '../../relay/server.js';
import { CHROMIUM_MISSING, launchChromium, openPanel, shot, startPanelAgent, stepTimer } from './panel-harness.js';

/**
 * The panel served by the relay (docs/panel.md § Relay): the relay's own page opens the fleet view
 * (the relay's agents with their presence), and a link opens an agent's own panel through the relay
 * at `/agents/<id>/` — its page, assets, API and telemetry stream all forwarded over the trunk, the
 * relay key acting on the agent through its on-behalf-of token. A real relay (embedded broker) and a
 * real agent (the demo project, dialling out over MQTT), in headless Chromium.
 */
declare const document: { querySelector(selector: string): { textContent: string | null } | null; querySelectorAll(selector: string): { length: number } };

const AGENT_ID = 'rover-1';
let relay: Relay;
let stopRelay: () => Promise<void>;
let agent: RunningAgent;
let browser: Browser;
let operatorKey: string;
const consoleErrors: string[] = [];
const { timed, report: reportTimings } = stepTimer('relay fleet');

beforeAll(async () => {
  ({ relay, stop: stopRelay } = await startRelay({ requestTimeoutMs: 10_000 }));
  const { token } = await enroll(relay, TENANT, AGENT_ID);
  agent = (
    await startPanelAgent({ SVC_RELAY_URL: `mqtt://127.0.0.1:${relay.mqttPort}`, SVC_RELAY_ENROLL_TOKEN: token, SVC_TENANT_ID: TENANT })
  ).agent;
  operatorKey = await createKey(relay, 'operator', TENANT);
  await until(() => relay.presence.get(TENANT, AGENT_ID)?.online, 'the agent online at the relay', 20_000);
  if (CHROMIUM_MISSING) return;
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await agent?.close();
  await stopRelay?.();
  reportTimings();
});

describe('the relay serves the panel', () => {
  it('at / and /control-center, marked as served by the relay; an agent panel is forwarded at /agents/<id>/', async () => {
    for (const p of ['/', '/control-center']) {
      const r = await call(relay.baseUrl, 'GET', p);
      expect(r.status, p).toBe(200);
      expect(r.headers.get('content-type')).toMatch(/^text\/html/);
      expect(r.headers.get('content-security-policy')).toContain("default-src 'self'");
      expect(r.text).toContain('<meta name="svc-served-by" content="relay">');
    }
    const sw = await call(relay.baseUrl, 'GET', '/control-center-sw.js');
    expect(sw.status).toBe(200);
    expect((await call(relay.baseUrl, 'GET', '/control-center/assets/nope.js')).status).toBe(404);

    // Through the relay: the agent's own page, its script, and /agents/<id> → /agents/<id>/.
    const redirect = await fetch(`${relay.baseUrl}/agents/${AGENT_ID}`, { redirect: 'manual' });
    expect([redirect.status, redirect.headers.get('location')]).toEqual([308, `${AGENT_ID}/`]);
    for (const p of ['/', '/control-center']) {
      const page = await call(relay.baseUrl, 'GET', `/agents/${AGENT_ID}${p}`);
      expect(page.status, p).toBe(200);
      expect(page.headers.get('x-svc-relay-node')).toBe(relay.node);
      // Marked as reached through the relay (relay keys only, no OIDC button), unlike the agent's own page.
      expect(page.text).toContain('<meta name="svc-served-by" content="relay-agent">');
      expect(await (await agent.fetch(p)).text()).not.toContain('svc-served-by');
      const js = /control-center\/assets\/(app-[A-Z0-9]+\.js)/.exec(page.text)![1]!;
      const script = await fetch(`${relay.baseUrl}/agents/${AGENT_ID}/control-center/assets/${js}`);
      expect(script.status).toBe(200);
      expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
      expect((await script.arrayBuffer()).byteLength).toBeGreaterThan(10_000);
    }
    // Only GET/HEAD of panel paths and /v1 are forwarded.
    expect((await call(relay.baseUrl, 'POST', `/agents/${AGENT_ID}/control-center`)).status).toBe(404);
    expect((await call(relay.baseUrl, 'GET', `/agents/${AGENT_ID}/metrics`)).status).toBe(404);
  });
});

describe('the browser', () => {
  it('finds chromium', () => {
    if (CHROMIUM_MISSING) throw new Error(CHROMIUM_MISSING);
  });
});

describe('the fleet view in headless Chromium', () => {
  let page: Page;

  beforeAll(() => {
    if (CHROMIUM_MISSING) throw new Error(CHROMIUM_MISSING);
  });

  it('lists the relay agents with their presence, as GET /v1/fleet/agents reports them', async () => {
    page = await timed('relay sign-in', () => openPanel(browser, relay.baseUrl, operatorKey, consoleErrors));
    await timed('fleet view', async () => {
      await page.waitForSelector(`tr[data-agent="${AGENT_ID}"]`);
      expect(await page.textContent(`tr[data-agent="${AGENT_ID}"] [data-testid="agent-state"]`)).toBe('online');
    });
    expect(await page.textContent('[data-testid="who"]')).toContain(`tenant ${TENANT}`);
    // Only the fleet view on a relay page: the agent views need an agent.
    expect(await page.$$eval('nav a', (as) => as.map((a) => a.getAttribute('data-view')))).toEqual(['fleet']);
    const api = await call(relay.baseUrl, 'GET', '/v1/fleet/agents', { token: operatorKey });
    const rows = await page.$$eval('tr[data-agent]', (trs) => trs.map((tr) => tr.getAttribute('data-agent')));
    expect(rows).toEqual(api.json.agents.map((a: { agent_id: string }) => a.agent_id).sort());
    expect(await page.textContent('[data-testid="fleet-count"]')).toContain('1 of 1 online');
    await shot(page, 'relay-fleet');

    // Another tenant's key sees none of them (the relay's tenant routing, docs/relay.md).
    const otherKey = await createKey(relay, 'operator', 'other-tenant');
    const other = await call(relay.baseUrl, 'GET', '/v1/fleet/agents', { token: otherKey });
    expect(other.json.agents).toEqual([]);
    // An unknown key is refused at the relay's sign-in.
    expect((await call(relay.baseUrl, 'GET', '/v1/fleet/agents', { token: 'not-a-key' })).status).toBe(401);
  });

  it("opens the agent's panel through the relay: overview data from the agent, devices, the same key", async () => {
    await timed('agent panel through the relay', async () => {
      await page.click(`tr[data-agent="${AGENT_ID}"] [data-testid="open-agent"]`);
      await page.waitForURL(`${relay.baseUrl}/agents/${AGENT_ID}/`);
      // The key this tab keeps signs in again (same origin); the agent sees the relay key's role.
      await page.waitForSelector('[data-testid="project-name"]');
    });
    const instance = await call(relay.baseUrl, 'GET', `/agents/${AGENT_ID}/v1/instance`, { token: operatorKey });
    expect(instance.status).toBe(200);
    expect(await page.textContent('[data-testid="project-name"]')).toBe(instance.json.project_name);
    expect(instance.json.project_name).toBe('Warehouse Patrol Demo');
    expect(await page.textContent('[data-testid="who"]')).toContain('operator');
    const navViews = await page.$$eval('nav a', (as) => as.map((a) => a.getAttribute('data-view')));
    expect(navViews).toContain('overview');
    expect(navViews).not.toContain('fleet');
    expect(navViews).not.toContain('admin');

    // The devices table and a live plot through the relayed WebSocket stream.
    await timed('devices through the relay', async () => {
      await page.click('nav a[data-view="devices"]');
      await page.waitForSelector('tr[data-device]');
    });
    const devices = await call(relay.baseUrl, 'GET', `/agents/${AGENT_ID}/v1/devices`, { token: operatorKey });
    const ids = ((devices.json.devices ?? devices.json) as { id: string }[]).map((d) => d.id).sort();
    expect((await page.$$eval('tr[data-device]', (trs) => trs.map((tr) => tr.getAttribute('data-device')))).sort()).toEqual(ids);
    // The telemetry plot gains points over the relayed WebSocket (`WS /agents/<id>/v1/stream/telemetry`).
    await timed('telemetry through the relay', async () => {
      await page.click('tr[data-device="dockhand-imu"]');
      await page.waitForFunction(() => document.querySelector('[data-testid="stream-state"]')?.textContent === 'live', undefined, { timeout: 10_000 });
      let n = 0;
      const feed = setInterval(() => {
        n += 1;
        agent.agent.services.telemetry.append({ kind: 'device', device_id: 'dockhand-imu', metric: 'temperature', value: 20 + Math.sin(n / 3) * 4, timestamp_ms: Date.now() });
      }, 50);
      try {
        await page.waitForFunction(() => Number(document.querySelector('[data-testid="sample-count"]')?.textContent) >= 10, undefined, { timeout: 10_000 });
      } finally {
        clearInterval(feed);
      }
    });
    await shot(page, 'relay-agent-devices');

    // /agents/<id>/control-center is the same panel.
    await page.goto(`${relay.baseUrl}/agents/${AGENT_ID}/control-center#/overview`);
    await page.waitForSelector('[data-testid="project-name"]');

    // A fresh tab straight at the agent's address on the relay: its sign-in asks for a relay key, which works.
    const direct = await (await browser.newContext()).newPage();
    await direct.goto(`${relay.baseUrl}/agents/${AGENT_ID}/`);
    await direct.waitForSelector('input[name="api-key"]');
    expect(await direct.textContent('form.signin')).toContain('sign in with a key of the relay');
    expect(await direct.$('[data-testid="oidc-signin"]')).toBeNull();
    await direct.close();
    const fresh = await openPanel(browser, `${relay.baseUrl}/agents/${AGENT_ID}`, operatorKey, consoleErrors);
    await fresh.waitForSelector('[data-testid="project-name"]');
    expect(await fresh.textContent('[data-testid="who"]')).toContain('operator');
    await fresh.context().close();
  }, 30_000);

  it('shows an agent that leaves as offline, without a link', async () => {
    await page.goto(`${relay.baseUrl}/#/fleet`);
    await page.waitForSelector(`tr[data-agent="${AGENT_ID}"]`);
    await agent.close();
    await page.waitForFunction(
      (id) => document.querySelector(`tr[data-agent="${id}"] [data-testid="agent-state"]`)?.textContent === 'offline',
      AGENT_ID,
      { timeout: 15_000 },
    );
    expect(await page.$(`tr[data-agent="${AGENT_ID}"] [data-testid="open-agent"]`)).toBeNull();
  }, 20_000);

  it('logged no console errors', () => {
    expect(consoleErrors).toEqual([]);
  });
});

