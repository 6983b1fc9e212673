import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { RunningAgent } from '../helpers/agent-harness.js';
import { CHROMIUM_MISSING, KEYS, SHOTS, call, launchChromium, openPanel, shot, startPanelAgent, stepTimer } from './panel-harness.js';

/**
 * The programs and recovery views in headless Chromium against the demo project (docs/panel.md § Views):
 * every number on screen is compared with the same operation called directly, the simulation's
 * trajectory with the body's `result.path`, and the recovery execute goes through its confirmation
 * (cancel changes nothing, confirm records evidence) while an auditor has no execute control and is
 * refused by the agent.
 */
/** The page's DOM as waitForFunction callbacks see it (they run in the browser; the project compiles without the DOM lib). */
declare const document: {
  querySelector(selector: string): { textContent: string | null; getAttribute(name: string): string | null } | null;
};

let a: RunningAgent;
let root: string;
let browser: Browser;
const consoleErrors: string[] = [];
const { timed, report: reportTimings } = stepTimer('programs/recovery');

const text = async (page: Page, selector: string) => ((await page.textContent(selector)) ?? '').trim();

beforeAll(async () => {
  ({ agent: a, root } = await startPanelAgent());
  if (CHROMIUM_MISSING) return;
  browser = await timed('launch', () => launchChromium());
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await a?.close();
  reportTimings();
});

describe('programs and recovery views in headless Chromium', () => {
  beforeAll(() => {
    if (CHROMIUM_MISSING) throw new Error(CHROMIUM_MISSING);
  });

  it('programs: the project files, the picked source, readiness/assure/verify as the agent answers them, and a simulated trajectory', async () => {
    const page = await timed('programs sign-in', () => openPanel(browser, a.baseUrl, KEYS.operator, consoleErrors, '#/programs'));

    // The file list is the project's: GET /v1/programs/files, and the demo's two programs.
    const listed = await call(a, 'GET', '/v1/programs/files', KEYS.operator);
    expect(listed.status).toBe(200);
    const expected = (listed.body.files as Array<{ path: string }>).map((f) => f.path);
    expect(expected).toEqual(['programs/dock.sd', 'programs/patrol.sd']);
    await timed('file list', async () => {
      await page.waitForSelector('table[data-testid="program-files"] tbody tr');
      expect(await page.$$eval('table[data-testid="program-files"] tbody tr', (rows) => rows.map((r) => r.getAttribute('data-file')))).toEqual(expected);
    });

    // Pick dock.sd, then patrol.sd: each pick shows that file's source and reports.
    for (const file of ['programs/dock.sd', 'programs/patrol.sd']) {
      await timed(`reports ${file}`, async () => {
        await page.click(`tr[data-file="${file}"]`);
        await page.waitForFunction((f) => document.querySelector('[data-testid="picked-file"]')?.textContent === f, file);
        await page.waitForSelector('[data-testid="program-source"]');
        expect(await page.textContent('[data-testid="program-source"]')).toBe(fs.readFileSync(path.join(root, file), 'utf8'));

        const readiness = (await call(a, 'POST', '/v1/programs/readiness', KEYS.operator, { file })).body.report;
        await page.waitForSelector('[data-testid="readiness-score"]');
        expect(await text(page, '[data-testid="readiness-score"]')).toBe(`${readiness.score.total}/${readiness.score.maximum}`);
        expect(await text(page, '[data-testid="readiness-status"]')).toBe(readiness.status);
        expect(await text(page, '[data-testid="mission-ready"]')).toBe(readiness.mission_ready ? 'YES' : 'NO');
        expect(await page.$$('[data-testid="readiness-issues"] li')).toHaveLength(readiness.issues.length);

        const assure = (await call(a, 'POST', '/v1/programs/assure', KEYS.operator, { file })).body.report;
        await page.waitForSelector('[data-testid="assure-verdict"]');
        expect(await text(page, '[data-testid="assure-verdict"]')).toBe(assure.passed ? 'PASS' : 'FAIL');
        expect(await text(page, '[data-testid="assure-score"]')).toBe(String(assure.score));
        expect(await page.$$('[data-testid="assure-sections"] tbody tr')).toHaveLength(7);

        const hardware = (await call(a, 'POST', '/v1/programs/verify/hardware', KEYS.operator, { file })).body.report;
        await page.waitForSelector('[data-testid="verify-compatible"]');
        expect(await text(page, '[data-testid="verify-compatible"]')).toBe(hardware.compatible ? 'Compatible' : 'Not compatible');
        const passing = (hardware.items as Array<{ severity: string }>).filter((i) => i.severity === 'pass').length;
        expect(await text(page, '[data-testid="verify-checks"]')).toBe(`${passing} of ${hardware.items.length} pass`);
        const caps = (await call(a, 'POST', '/v1/programs/verify/capabilities', KEYS.operator, { file })).body.capabilities as Array<{ robot: string; rows: unknown[] }>;
        await page.waitForSelector('table[data-testid="capabilities"]');
        for (const robot of caps) {
          expect(await page.$$(`table[data-testid="capabilities"][data-robot="${robot.robot}"] tbody tr`)).toHaveLength(robot.rows.length);
        }
      });
    }
    // Readable reports, not raw JSON: the JSON stays folded.
    expect(await page.$$eval('details.raw-json', (els) => els.every((e) => !(e as unknown as { open: boolean }).open))).toBe(true);
    await shot(page, 'programs');

    await timed('simulation', async () => {
      await page.click('[data-testid="run-simulation"]');
      await page.waitForSelector('[data-testid="trajectory"]');
    });
    const sim = (await call(a, 'POST', '/v1/programs/simulation', KEYS.operator, { file: 'programs/patrol.sd', execute: true })).body.simulation;
    const simPath = sim.result.path as Array<{ x: number; y: number }>;
    expect(simPath.length).toBeGreaterThan(1);
    expect(Number(await page.getAttribute('[data-testid="trajectory"]', 'data-points'))).toBe(simPath.length);
    const drawn = ((await page.getAttribute('[data-testid="trajectory"] polyline', 'points')) ?? '').trim().split(/\s+/);
    expect(drawn).toHaveLength(simPath.length);
    // The path goes somewhere: the first and last drawn points differ (patrol drives about a metre).
    expect(drawn[0]).not.toBe(drawn[drawn.length - 1]);
    const pose = sim.result.state.pose;
    expect(await text(page, '[data-testid="sim-final-pose"]')).toBe(`x ${pose.x.toFixed(2)} m, y ${pose.y.toFixed(2)} m, θ ${pose.theta.toFixed(2)} rad`);
    expect(await text(page, '[data-testid="sim-steps"]')).toBe(`${sim.result.metrics.execution.loop_iterations} loop iterations, ${sim.event_count} events`);
    expect(await text(page, '[data-testid="sim-estops"]')).toBe(String(sim.result.metrics.scheduler.emergency_stops));
    await shot(page, 'programs-simulation');
    await page.context().close();
  });

  it('recovery: plans as the agent lists them; execute asks first, cancel does nothing, confirm records the run', async () => {
    const page = await timed('recovery sign-in', () => openPanel(browser, a.baseUrl, KEYS.operator, consoleErrors, '#/recovery'));
    const plans = (await call(a, 'GET', '/v1/recovery/plans', KEYS.operator)).body.plans as Array<{ plan_id: string }>;
    expect(plans.length).toBeGreaterThan(0);
    await timed('plans', async () => {
      await page.waitForSelector('table[data-testid="recovery-plans"] tbody tr');
      expect(await page.$$eval('table[data-testid="recovery-plans"] tbody tr', (rows) => rows.map((r) => r.getAttribute('data-plan')))).toEqual(plans.map((p) => p.plan_id));
    });
    const historyCount = async () => (await call(a, 'GET', '/v1/recovery/history', KEYS.operator)).body.history.length as number;
    const before = await historyCount();

    // Validate first (a sensitive read, nothing stored).
    await page.fill('input[name="entity_id"]', 'Sentinel');
    await page.fill('input[name="failure"]', 'lidar_timeout');
    await timed('validate', async () => {
      await page.click('button:has-text("Validate")');
      await page.waitForSelector('[data-testid="recovery-result"][data-mode="validate"]');
    });
    expect(await text(page, '[data-testid="recovery-result"] h3')).toContain('PASS');
    expect(await historyCount()).toBe(before);

    // Execute… opens the in-page dialog, which names what would run; Cancel closes it and runs nothing.
    await timed('confirm and cancel', async () => {
      await page.click('[data-testid="execute"]');
      await page.waitForSelector('[data-testid="confirm-execute"]');
    });
    const summary = await text(page, '[data-testid="confirm-execute"]');
    expect(summary).toContain('Sentinel');
    expect(summary).toContain('lidar_timeout');
    expect(summary).toContain('switch_sensor');
    // The viewport only: the dialog is fixed to it (a full-page shot would leave the backdrop short).
    await page.screenshot({ path: path.join(SHOTS, 'recovery-confirm.png') });
    await page.click('[data-testid="confirm-cancel"]');
    await page.waitForSelector('[data-testid="confirm-execute"]', { state: 'detached' });
    expect(await historyCount()).toBe(before);

    await timed('confirm and execute', async () => {
      await page.click('[data-testid="execute"]');
      await page.waitForSelector('[data-testid="confirm-execute"]');
      await page.click('[data-testid="confirm-execute-button"]');
      await page.waitForSelector('[data-testid="recovery-result"][data-mode="execute"]');
      await page.waitForSelector('table[data-testid="recovery-history"] tbody tr');
    });
    const history = (await call(a, 'GET', '/v1/recovery/history', KEYS.operator)).body.history as Array<{ evidence_id: string; entity_id: string; root_cause: string; executed: boolean }>;
    expect(history).toHaveLength(before + 1);
    expect(history[0]).toMatchObject({ entity_id: 'Sentinel', root_cause: 'lidar_timeout', executed: true });
    expect(await page.$$eval('table[data-testid="recovery-history"] tbody tr', (rows) => rows.map((r) => r.getAttribute('data-evidence')))).toEqual(history.map((h) => h.evidence_id));
    const metrics = (await call(a, 'GET', '/v1/recovery/metrics', KEYS.operator)).body.metrics;
    await page.waitForFunction((n) => document.querySelector('[data-testid="metric-total"]')?.textContent === String(n), metrics.total_recoveries);
    await shot(page, 'recovery');
    await page.context().close();
  });

  it('recovery: an auditor sees plans and history without an execute control, and the agent refuses its execute', async () => {
    const page = await timed('auditor', async () => {
      const p = await openPanel(browser, a.baseUrl, KEYS.auditor, consoleErrors, '#/recovery');
      await p.waitForSelector('table[data-testid="recovery-plans"] tbody tr');
      await p.waitForSelector('table[data-testid="recovery-history"] tbody tr');
      return p;
    });
    expect(await text(page, '[data-testid="who"]')).toContain('auditor');
    expect(await page.$('[data-testid="execute"]')).toBeNull();
    expect(await page.$('button:has-text("Execute")')).toBeNull();
    expect(await page.$('button:has-text("Validate")')).not.toBeNull();
    const before = (await call(a, 'GET', '/v1/recovery/history', KEYS.auditor)).body.history.length;
    // Hidden is not the protection: the agent refuses the auditor's execute itself.
    const refused = await call(a, 'POST', '/v1/recovery/execute', KEYS.auditor, { entity_id: 'Sentinel', failure: 'lidar_timeout', force_execute: true });
    expect(refused.status).toBe(403);
    expect((await call(a, 'GET', '/v1/recovery/history', KEYS.auditor)).body.history.length).toBe(before);
    await shot(page, 'recovery-auditor');
    await page.context().close();
  });

  it('logged no console errors', () => {
    expect(consoleErrors).toEqual([]);
  });
});
