import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { tempDir, type RunningAgent } from '../helpers/agent-harness.js';
import { CHROMIUM_MISSING, KEYS, KEY_IDS, call, launchChromium, openPanel as open, shot, startPanelAgent, stepTimer } from './panel-harness.js';

/**
 * The rollouts, configuration and audit views in a real browser (docs/panel.md § Views), against the
 * demo agent: a staged rollout to four deploy agents (a local HTTP stand-in that takes its time, so
 * the batches move while the view polls), a snapshot saved, submitted and approved by two other
 * administrators, a drift scan after a trust change, and the audit of all that with its chain status.
 */
declare const document: {
  querySelector(selector: string): { textContent: string | null; getAttribute(name: string): string | null } | null;
  querySelectorAll(selector: string): ArrayLike<{ textContent: string | null; getAttribute(name: string): string | null }>;
};

/** A second administrator (`env-default`), so a two-vote quorum can be met by two people besides the requester. */
const ENV_ADMIN = 'e0'.repeat(32);
const SUPERVISOR = KEYS.supervisor;
const TARGETS = ['a1', 'a2', 'a3', 'a4'];
/** How long each stand-in deploy agent takes to install: long enough for a 1 s poll to see the rollout move. */
const INSTALL_MS = 700;

let a: RunningAgent;
let browser: Browser;
let deployAgents: http.Server;
const installs: string[] = [];
const consoleErrors: string[] = [];
const { timed, timings, report: reportTimings } = stepTimer('operations views');

const openPanel = (key: string, hash = ''): Promise<Page> => open(browser, a.baseUrl, key, consoleErrors, hash);

/** Deploy agents `/agents/<id>/v1/{rollout,readiness,rollback}` (docs/operations.md § Targets): every install succeeds after INSTALL_MS, every target is ready. */
async function startDeployAgents(): Promise<string> {
  deployAgents = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const m = /^\/agents\/([^/]+)\/v1\/(rollout|readiness|rollback)/.exec(req.url ?? '');
      res.setHeader('content-type', 'application/json');
      if (!m) {
        res.statusCode = 404;
        return res.end('{}');
      }
      if (m[2] === 'rollout') {
        const parsed = JSON.parse(body) as { target: string; version: string };
        installs.push(`${m[1]} ${parsed.version}`);
        // A version ending in "-bad" is refused by a3 (a failing batch, for the halted rollout).
        const refuse = m[1] === 'a3' && parsed.version.endsWith('-bad');
        const answer = refuse ? { ok: false, target: parsed.target, version: 'previous', error: 'disk full' } : { ok: true, target: parsed.target, version: parsed.version };
        setTimeout(() => res.end(JSON.stringify(answer)), refuse ? 0 : INSTALL_MS);
        return;
      }
      if (m[2] === 'readiness') return res.end(JSON.stringify({ readiness: { mission_ready: true } }));
      return res.end(JSON.stringify({ ok: true }));
    });
  });
  await new Promise<void>((r) => deployAgents.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(deployAgents.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  const url = await startDeployAgents();
  const registry = path.join(tempDir('svc-panel-ops-'), 'deploy-agents.json');
  fs.writeFileSync(registry, JSON.stringify({ agents: TARGETS.map((id) => ({ target: `${id}@Pi`, url: `${url}/agents/${id}` })) }));
  a = (await startPanelAgent({ SVC_DEPLOY_AGENTS: registry, SVC_API_KEY: ENV_ADMIN })).agent;
  if (CHROMIUM_MISSING) return;
  browser = await timed('launch', () => launchChromium());
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await a?.close();
  await new Promise<void>((r) => (deployAgents ? deployAgents.close(() => r()) : r()));
  reportTimings();
});

/** What the view shows per batch: its verdict and each target's state, read from the DOM. */
function batchesInView(page: Page) {
  return page.evaluate(() =>
    Array.from(document.querySelectorAll('[data-testid="current-rollout"] [data-batch]')).map((b) => {
      const el = b as unknown as { getAttribute(n: string): string | null; querySelectorAll(s: string): ArrayLike<{ getAttribute(n: string): string | null; textContent: string | null }> };
      return {
        index: Number(el.getAttribute('data-batch')),
        verdict: el.getAttribute('data-verdict'),
        steps: Array.from(el.querySelectorAll('[data-target]')).map((r) => {
          const row = r as unknown as { getAttribute(n: string): string | null; querySelector(s: string): { textContent: string | null } | null };
          return [row.getAttribute('data-target'), row.querySelector('[data-testid="step-status"]')?.textContent] as const;
        }),
      };
    }),
  );
}

describe.skipIf(!!CHROMIUM_MISSING)('rollouts, configuration and audit views', () => {
  it('rollouts: a staged rollout is planned, confirmed and executed from the view; its batches move while it runs and match GET /v1/ota/status', async () => {
    const page = await openPanel(SUPERVISOR, '#/rollouts');
    await page.waitForSelector('[data-view="rollouts"] [data-testid="new-rollout"]');
    await page.fill('input[name="version"]', '2026.11-panel');
    await page.selectOption('select[name="strategy"]', 'staged');
    await page.fill('input[name="phases"]', '25, 50, 100');
    await page.fill('textarea[name="targets"]', TARGETS.map((t) => `${t}@Pi`).join('\n'));

    // The plan in the view is the agent's plan.
    await timed('plan', async () => {
      await page.click('[data-testid="new-rollout"] button:has-text("Plan")');
      await page.waitForSelector('[data-testid="plan"] [data-batch="3"]');
    });
    const planned = await call(a, 'POST', '/v1/ota/plan', SUPERVISOR, { strategy: 'staged', version: '2026.11-panel', phases: [25, 50, 100], assignments: TARGETS.map((robot_name) => ({ robot_name, hardware: 'Pi' })) });
    expect(planned.status).toBe(200);
    const planRows = await page.$$eval('[data-testid="plan"] [data-batch]', (els) => els.map((e) => ({ index: Number(e.getAttribute('data-batch')), targets: e.querySelectorAll('[data-target]').length, verdict: e.getAttribute('data-verdict') })));
    expect(planRows).toEqual(planned.body.rollout.batches.map((b: { index: number; targets: number }) => ({ index: b.index, targets: b.targets, verdict: 'planned' })));
    expect(planRows.map((b) => b.targets)).toEqual([1, 1, 2]);
    expect(installs).toEqual([]); // planning contacts no target

    // Execute needs a confirmation.
    await page.click('button:has-text("Execute…")');
    await page.waitForSelector('[data-testid="confirm-execute"]');
    expect(await page.textContent('[data-testid="confirm-execute"]')).toContain('on 4 targets in 3 batches');
    const seen = new Set<string>();
    const t0 = performance.now();
    await page.click('button:has-text("Confirm execute")');
    // Sample the view while the rollout runs: the status and the batch verdicts change under the 1 s poll.
    for (;;) {
      const status = await page.evaluate(() => document.querySelector('[data-testid="rollout-status"]')?.textContent ?? null);
      const batches = await batchesInView(page);
      const state = `${status}:${batches.map((b) => b.verdict).join(',')}`;
      if (status === 'running' && state.includes('passed') && ![...seen].some((x) => x.startsWith('running:') && x.includes('passed'))) await shot(page, 'rollouts-running');
      seen.add(state);
      if (status === 'succeeded') break;
      expect(performance.now() - t0, `rollout did not finish in the view; seen ${[...seen].join(' | ')}`).toBeLessThan(20_000);
      await page.waitForTimeout(150);
    }
    timings['execute-to-succeeded-in-view'] = Math.round(performance.now() - t0);
    // It was seen running with batches at different stages, then every batch passed.
    expect([...seen].some((s) => s.startsWith('running:'))).toBe(true);
    expect([...seen].filter((s) => s.startsWith('running:')).some((s) => s.includes('passed') && /running|waiting/.test(s.split(':')[1]!))).toBe(true);
    await page.waitForSelector('[data-testid="execute-result"]');
    expect(await page.textContent('[data-testid="execute-result"]')).toMatch(/succeeded/);

    // What the view shows is what the agent reports.
    const st = await call(a, 'GET', '/v1/ota/status', SUPERVISOR);
    const r = st.body.rollout;
    expect(r).toMatchObject({ status: 'succeeded', completed_steps: 4, halted: false });
    expect(await page.textContent('[data-testid="rollout-id"]')).toBe(r.id);
    const shown = await batchesInView(page);
    expect(shown).toEqual(
      r.rollout.batches.map((b: { index: number }) => ({
        index: b.index,
        verdict: 'passed',
        steps: r.rollout.steps.filter((s: { batch: number }) => s.batch === b.index).map((s: { target: string; status: string }) => [s.target, s.status]),
      })),
    );
    expect(shown.flatMap((b) => b.steps.map((s) => s[1]))).toEqual(['deployed', 'deployed', 'deployed', 'deployed']);
    const progress = await page.$$eval('[data-testid="current-rollout"] [data-testid="batch-progress"]', (els) => els.map((e) => e.textContent));
    expect(progress).toEqual(['1/1 deployed', '1/1 deployed', '2/2 deployed']);
    expect(installs.sort()).toEqual(TARGETS.map((t) => `${t} 2026.11-panel`));
    // Deployed versions and the past rollout appear too.
    expect(await page.textContent('[data-testid="versions"]')).toContain('a4@Pi');
    expect(await page.textContent('[data-testid="history"]')).toContain('2026.11-panel');
    await shot(page, 'rollouts');
    await page.context().close();
  }, 60_000);

  let snapshotId = '';

  it('configuration: a snapshot saved in the view is listed (and in GET /v1/config/snapshots); an approval with a quorum of 2 gets its votes from two administrators; another is rejected', async () => {
    const page = await openPanel(SUPERVISOR, '#/configuration');
    await page.waitForSelector('[data-testid="save-snapshot"]');
    await page.fill('input[name="snapshot-label"]', 'before the night shift');
    await timed('save-snapshot', async () => {
      await page.click('button:has-text("Save snapshot")');
      await page.waitForSelector('[data-testid="snapshots"] tr[data-snapshot]');
    });
    const listed = await call(a, 'GET', '/v1/config/snapshots', SUPERVISOR);
    expect(listed.body.snapshots).toHaveLength(1);
    snapshotId = listed.body.snapshots[0].id;
    expect(listed.body.snapshots[0]).toMatchObject({ label: 'before the night shift', encrypted: false, project_name: 'Warehouse Patrol Demo' });
    const row = await page.textContent(`tr[data-snapshot="${snapshotId}"]`);
    expect(row).toContain('before the night shift');
    expect(row).toContain(String(listed.body.snapshots[0].device_count));

    // Submit for approval, two votes needed.
    await page.click(`tr[data-snapshot="${snapshotId}"] button:has-text("Request approval")`);
    await page.fill('input[name="required-approvals"]', '2');
    await page.fill('input[name="approval-note"]', 'trust levels for the night shift');
    await page.click('button:has-text("Submit for approval")');
    await page.waitForSelector('[data-testid="approvals"] tr[data-approval]');
    const queue = (await call(a, 'GET', '/v1/config/approvals', SUPERVISOR)).body.approvals;
    expect(queue).toHaveLength(1);
    const approvalId: string = queue[0].id;
    expect(queue[0]).toMatchObject({ snapshot_id: snapshotId, requester: KEY_IDS.supervisor, status: 'pending', required_approvals: 2 });
    expect(await page.textContent(`tr[data-approval="${approvalId}"] [data-testid="votes"]`)).toMatch(/^0\/2/);
    await shot(page, 'configuration-pending');
    await page.context().close();

    // First vote: the administrator's key, in the view.
    const admin = await openPanel(KEYS.administrator, '#/configuration');
    await admin.waitForSelector(`tr[data-approval="${approvalId}"] button:has-text("Approve")`);
    await admin.click(`tr[data-approval="${approvalId}"] button:has-text("Approve")`);
    await admin.waitForFunction((id) => document.querySelector(`tr[data-approval="${id}"] [data-testid="votes"]`)?.textContent?.startsWith('1/2') ?? false, approvalId);
    expect(await admin.textContent('[data-testid="config-message"]')).toBe('Vote recorded: 1/2.');
    expect(await admin.textContent(`tr[data-approval="${approvalId}"] [data-testid="approval-status"]`)).toBe('pending');
    await admin.context().close();

    // Second vote: another administrator; the quorum is met and the snapshot published.
    const second = await openPanel(ENV_ADMIN, '#/configuration');
    await second.waitForSelector(`tr[data-approval="${approvalId}"] button:has-text("Approve")`);
    await second.click(`tr[data-approval="${approvalId}"] button:has-text("Approve")`);
    await second.waitForFunction((id) => document.querySelector(`tr[data-approval="${id}"] [data-testid="approval-status"]`)?.textContent === 'approved', approvalId);
    expect(await second.textContent(`tr[data-approval="${approvalId}"] [data-testid="votes"]`)).toMatch(/^2\/2.*admin, env-default/);
    expect(await second.textContent('[data-testid="config-message"]')).toMatch(new RegExp(`^Quorum met \\(2/2\\): published ${snapshotId}`));
    expect(await second.$(`tr[data-approval="${approvalId}"] button`)).toBeNull(); // no votes on a decided request
    const decided = (await call(a, 'GET', '/v1/config/approvals', SUPERVISOR)).body.approvals[0];
    expect(decided).toMatchObject({ status: 'approved' });
    expect(decided.approvals.map((v: { approver: string }) => v.approver)).toEqual([KEY_IDS.administrator, 'env-default']);
    // A second request, rejected from the view: final, no votes left to cast.
    const again = await call(a, 'POST', '/v1/config/approvals', SUPERVISOR, { snapshot_id: snapshotId, note: 'not tonight' });
    expect(again.status).toBe(200);
    const rejectId: string = again.body.approval.id;
    await second.reload();
    await second.waitForSelector(`tr[data-approval="${rejectId}"] button:has-text("Reject")`);
    await second.click(`tr[data-approval="${rejectId}"] button:has-text("Reject")`);
    await second.waitForFunction((id) => document.querySelector(`tr[data-approval="${id}"] [data-testid="approval-status"]`)?.textContent === 'rejected', rejectId);
    expect(await second.textContent('[data-testid="config-message"]')).toBe(`Rejected ${rejectId}.`);
    expect((await call(a, 'GET', '/v1/config/approvals', SUPERVISOR)).body.approvals[1]).toMatchObject({ id: rejectId, status: 'rejected', resolver: 'env-default' });
    // The history lists the snapshot and the votes.
    await second.reload();
    await second.waitForSelector('[data-testid="config-history"]');
    const history = await second.textContent('[data-testid="config-history"]');
    expect(history).toContain('snapshot');
    expect(history).toContain('env-default');
    await second.context().close();
  }, 60_000);

  it('configuration: after a trust change, a drift scan run from the view shows the finding and is recorded (GET /v1/drift/scans)', async () => {
    // sentinel-air-probe is "verified" in the demo; vouching for it makes it "trusted": safety drift.
    expect((await call(a, 'POST', '/v1/devices/sentinel-air-probe/trust', SUPERVISOR, {})).status).toBe(200);
    const page = await openPanel(KEYS.operator, '#/configuration');
    await page.waitForSelector('[data-testid="drift"] button:has-text("Run scan")');
    expect(await page.$('[data-testid="save-snapshot"]')).toBeNull(); // the operator has Operate, not Deploy
    await timed('drift-scan', async () => {
      await page.click('button:has-text("Run scan")');
      await page.waitForSelector('[data-testid="drift-report"]');
    });
    const scans = (await call(a, 'GET', '/v1/drift/scans', SUPERVISOR)).body.scans;
    expect(scans).toHaveLength(1);
    expect(scans[0]).toMatchObject({ baseline_id: snapshotId, passed: false, triggered_alert: true });
    expect(await page.getAttribute('[data-testid="drift-report"]', 'data-passed')).toBe('false');
    const findings = await page.$$eval('[data-testid="findings"] tbody tr', (rows) => rows.map((r) => Array.from(r.querySelectorAll('td'), (td) => (td as { textContent: string | null }).textContent)));
    expect(findings.length).toBe(scans[0].finding_count);
    // The trust change is the only drift: publishing wrote exactly what the snapshot holds (the files
    // did not move, docs/operations.md § Publishing), and patrol.sd's members are all mapped under
    // their robot.member logical names (check 14, docs/operations.md § Drift).
    expect(findings).toEqual([['high', 'safety', 'device \'sentinel-air-probe\' trust_level: "verified" -> "trusted"', 'devices.sentinel-air-probe.trust_level']]);
    // No configuration finding, so no leaf differences to read.
    expect(await page.$$eval('[data-testid="diff"] li', (lis) => lis.length)).toBe(0);
    await page.waitForSelector(`[data-testid="scans"] tr[data-scan="${scans[0].id}"]`);
    expect(await page.textContent(`tr[data-scan="${scans[0].id}"]`)).toContain(String(scans[0].finding_count));
    // "Check drift" (a read) gives the same report without recording it.
    await page.click('button:has-text("Check drift")');
    await page.waitForFunction(() => document.querySelector('[data-testid="drift-report"]')?.textContent?.includes('(not recorded)') ?? false);
    expect((await call(a, 'GET', '/v1/drift/scans', SUPERVISOR)).body.scans).toHaveLength(1);
    await page.click('button:has-text("Run scan")');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="scans"] tr[data-scan]').length === 2);
    await shot(page, 'configuration');
    await page.context().close();
  }, 60_000);

  it('audit: the records of the actions above are listed, the chain status matches GET /v1/audit/mutations, filters page the list, the export runs', async () => {
    // More records than a page holds (25): test alerts, each an audited mutation.
    for (let i = 0; i < 20; i++) expect((await call(a, 'POST', '/v1/alerts/test', KEYS.operator, { message: `audit paging ${i}` })).status).toBe(200);
    const page = await openPanel(SUPERVISOR, '#/audit');
    await page.waitForSelector('[data-testid="chain-status"]');
    const direct = await call(a, 'GET', '/v1/audit/mutations', SUPERVISOR);
    expect(direct.status).toBe(200);
    expect(direct.body.chain_valid).toBe(true);
    expect(await page.getAttribute('[data-testid="chain-status"]', 'data-valid')).toBe('true');
    const verdict = await page.textContent('.chain-verdict');
    expect(verdict).toContain('Hash chain verifies');
    expect(verdict).toContain(`${direct.body.record_count} record`);
    expect(await page.textContent('[data-testid="audit-count"]')).toBe(`${direct.body.record_count} of ${direct.body.record_count} records, newest first`);
    // The newest record first, as the chain has it.
    const newest = direct.body.audit.records.at(-1).id;
    expect(await page.getAttribute('[data-testid="audit-records"] tbody tr:first-child', 'data-record')).toBe(newest);

    // Pages of 25, newest first; the second page continues where the first stopped.
    expect(direct.body.record_count).toBeGreaterThan(25);
    expect(await page.textContent('[data-testid="audit-page"]')).toBe(`page 1 of ${Math.ceil(direct.body.record_count / 25)}`);
    expect(await page.$$eval('[data-testid="audit-records"] tbody tr', (rows) => rows.length)).toBe(25);
    await page.click('button:has-text("Older")');
    const older = direct.body.audit.records.at(-26).id;
    expect(await page.getAttribute('[data-testid="audit-records"] tbody tr:first-child', 'data-record')).toBe(older);
    await page.click('button:has-text("Newer")');

    const rowsFor = async (filter: string) => {
      await page.fill('input[name="audit-search"]', filter);
      return page.$$eval('[data-testid="audit-records"] tbody tr', (rows) => rows.map((r) => r.textContent ?? ''));
    };
    const execute = await rowsFor('/v1/ota/execute');
    expect(execute).toHaveLength(1);
    expect(execute[0]).toContain(KEY_IDS.supervisor);
    expect(await rowsFor('/v1/config/snapshots')).toHaveLength(1);
    const votes = await rowsFor('/approve');
    expect(votes).toHaveLength(2);
    expect(votes.join(' ')).toContain('env-default');
    expect(await rowsFor('/v1/drift/scan')).toHaveLength(2);
    // Every filtered row is a record of the chain with that path.
    const chainExecute = direct.body.audit.records.filter((r: { payload: string }) => JSON.parse(r.payload).path === '/v1/ota/execute');
    expect(chainExecute).toHaveLength(1);
    await page.fill('input[name="audit-search"]', '');

    // Export (a Blob download in the browser).
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('button:has-text("Export JSONL")')]);
    expect(download.suggestedFilename()).toMatch(/^audit-.*\.jsonl$/);
    expect(await page.textContent('[data-testid="export-message"]')).toMatch(/^Exported \d+ records as JSONL\.$/);
    await shot(page, 'audit');
    await page.context().close();
  }, 60_000);

  it('rollouts: a halted rollout shows its reason, the failed batch, the rolled-back targets and the batches it never reached', async () => {
    const assignments = TARGETS.map((robot_name) => ({ robot_name, hardware: 'Pi' }));
    const r = await call(a, 'POST', '/v1/ota/execute', SUPERVISOR, { strategy: 'canary', canary_percent: 25, version: '2026.12-bad', assignments, disruption_budget: 1, rollback_on_readiness_fail: true });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ halted: true, rollout: { success: false } });
    const page = await openPanel(KEYS.auditor, '#/rollouts');
    await page.waitForFunction(() => document.querySelector('[data-testid="rollout-status"]')?.textContent === 'failed');
    expect(await page.textContent('[data-testid="current-rollout"] dd.error')).toBe(r.body.halt_reason);
    const shown = await batchesInView(page);
    // The canary batch passed, then was rolled back when batch 2 failed.
    expect(shown.map((b) => b.verdict)).toEqual(['rolled_back', 'halted']);
    const status = (await call(a, 'GET', '/v1/ota/status', KEYS.auditor)).body.rollout;
    expect(status).toMatchObject({ status: 'failed', halted: true, halt_reason: r.body.halt_reason });
    expect(shown).toEqual(
      status.rollout.batches.map((b: { index: number }, i: number) => ({
        index: b.index,
        verdict: shown[i]!.verdict,
        steps: status.rollout.steps.filter((s: { batch: number }) => s.batch === b.index).map((s: { target: string; status: string }) => [s.target, s.status]),
      })),
    );
    expect(shown.flatMap((b) => b.steps.map((x) => x[1]))).toContain('failed');
    expect(shown.flatMap((b) => b.steps.map((x) => x[1]))).toContain('rolled_back');
    await shot(page, 'rollouts-halted');
    await page.context().close();
  }, 60_000);

  it('an auditor and a guest see the lists without save, approve, scan or execute controls and no audit table; the agent refuses those calls with 403', async () => {
    for (const role of ['auditor', 'guest'] as const) {
      const key = KEYS[role];
      const page = await openPanel(key, '#/rollouts');
      await page.waitForSelector('[data-testid="current-rollout"] [data-batch]');
      expect(await page.$('[data-testid="new-rollout"]'), role).toBeNull();
      expect(await page.$('button:has-text("Execute")'), role).toBeNull();
      await page.click('a[href="#/configuration"]');
      await page.waitForSelector('[data-testid="approvals"] tr[data-approval]');
      expect(await page.$('[data-testid="save-snapshot"]'), role).toBeNull();
      expect(await page.$('button:has-text("Request approval")'), role).toBeNull();
      expect(await page.$('button:has-text("Approve")'), role).toBeNull();
      expect(await page.$('button:has-text("Run scan")'), role).toBeNull();
      expect(await page.textContent('[data-testid="snapshots"]')).toContain('before the night shift');
      await page.click('a[href="#/audit"]');
      await page.waitForSelector('[data-testid="audit-denied"]');
      expect(await page.textContent('[data-testid="audit-denied"]')).toContain('Deploy');
      expect(await page.$('[data-testid="audit-records"]')).toBeNull();
      if (role === 'auditor') await shot(page, 'audit-auditor');
      await page.context().close();

      const body = { strategy: 'all', version: 'x', assignments: [{ robot_name: 'a1', hardware: 'Pi' }] };
      expect((await call(a, 'POST', '/v1/ota/execute', key, body)).status, `${role} execute`).toBe(403);
      expect((await call(a, 'POST', '/v1/ota/plan', key, body)).status, `${role} plan`).toBe(403);
      expect((await call(a, 'POST', '/v1/config/snapshots', key, {})).status, `${role} save`).toBe(403);
      expect((await call(a, 'POST', '/v1/config/approvals', key, { snapshot_id: snapshotId })).status, `${role} submit`).toBe(403);
      expect((await call(a, 'POST', '/v1/config/approvals/whatever/approve', key, {})).status, `${role} approve`).toBe(403);
      expect((await call(a, 'POST', '/v1/drift/scan', key, {})).status, `${role} scan`).toBe(403);
      expect((await call(a, 'GET', '/v1/audit/mutations', key)).status, `${role} audit`).toBe(403);
      expect((await call(a, 'GET', '/v1/audit/mutations/export?format=cef', key)).status, `${role} export`).toBe(403);
    }
  }, 60_000);

  it('logged no console errors', () => {
    expect(consoleErrors).toEqual([]);
  });
});
