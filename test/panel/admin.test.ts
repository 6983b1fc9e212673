import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { RunningAgent } from '../helpers/agent-harness.js';
import { startOidcProvider, type TestOidcProvider } from '../helpers/oidc-test-provider.js';
import { CHROMIUM_MISSING, KEYS, KEY_IDS, call, launchChromium, openPanel, shot, startPanelAgent, watchConsole, stepTimer } from './panel-harness.js';

/**
 * The admin view and OIDC sign-in in a real browser (docs/panel.md § Admin, § Sign-in): an
 * administrator manages API keys (the new token shown once, and working), users and the OIDC
 * settings (the secret never shown); an operator sees no admin view and the agent refuses it; a
 * person signs in with a real OpenID provider (`oidc-provider`, test/helpers/oidc-test-provider.ts)
 * through the popup and the agent's landing page, ending with the group-mapped role.
 */
declare const document: { querySelector(selector: string): { textContent: string | null } | null };
declare const window: { sessionStorage: { getItem(k: string): string | null }; opener: { postMessage(message: unknown, targetOrigin: string): void } };

const ADMIN = KEYS.administrator;
const CALLBACK_PATH = '/admin/oauth/oidc/callback';
const ACCOUNTS = { 'erin-lead': { name: 'Erin Lead', email: 'erin@example.test', groups: ['staff', 'ops-leads'] } };

let a: RunningAgent;
let idp: TestOidcProvider;
let browser: Browser;
let admin: Page;
const consoleErrors: string[] = [];
const { timed, report: reportTimings } = stepTimer('admin');

beforeAll(async () => {
  // Short sessions (66 s), so the panel's refresh of its OIDC session token (a minute before expiry) shows within the test.
  a = (await startPanelAgent({ SVC_SESSION_TTL_SECS: '66' })).agent;
  idp = await startOidcProvider({ redirectUri: `${a.baseUrl}${CALLBACK_PATH}`, accounts: ACCOUNTS });
  if (CHROMIUM_MISSING) return;
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await a?.close();
  await idp?.close();
  reportTimings();
});

describe('the browser', () => {
  it('finds chromium', () => {
    if (CHROMIUM_MISSING) throw new Error(CHROMIUM_MISSING);
  });
});

describe('the admin view in headless Chromium', () => {
  beforeAll(() => {
    if (CHROMIUM_MISSING) throw new Error(CHROMIUM_MISSING);
  });

  it('an administrator creates a key (its token shown once, and working), changes it and revokes it', async () => {
    admin = await timed('admin sign-in', () => openPanel(browser, a.baseUrl, ADMIN, consoleErrors, '#/admin'));
    await admin.waitForSelector('table[data-testid="keys"] tr[data-key]');
    expect(await admin.$$eval('nav a', (as) => as.map((x) => x.getAttribute('data-view')))).toContain('admin');
    // The list is the agent's (never a token or a hash).
    const listed = (await call(a, 'GET', '/v1/admin/api-keys', ADMIN)).body.keys as { key_id: string }[];
    expect((await admin.$$eval('tr[data-key]', (trs) => trs.map((tr) => tr.getAttribute('data-key')))).sort()).toEqual(listed.map((k) => k.key_id).sort());
    expect(await admin.content()).not.toContain(ADMIN);

    // Create: the token appears once, in the page, and it is a working key with the chosen role.
    const token = await timed('create key', async () => {
      await admin.selectOption('select[name="new-key-role"]', 'operator');
      await admin.fill('input[name="new-key-label"]', 'made in the panel');
      await admin.click('form[data-testid="create-key"] button[type="submit"]');
      await admin.waitForSelector('[data-testid="new-token-value"]');
      return admin.inputValue('[data-testid="new-token-value"]');
    });
    expect(token.length).toBeGreaterThanOrEqual(32);
    const keys = (await call(a, 'GET', '/v1/admin/api-keys', ADMIN)).body.keys as { key_id: string; role: string; label: string }[];
    const made = keys.find((k) => k.label === 'made in the panel')!;
    expect(made.role).toBe('operator');
    expect(JSON.stringify(keys)).not.toContain(token);
    const me = await call(a, 'GET', '/v1/rbac/me', token);
    expect([me.status, me.body.role, me.body.key_id]).toEqual([200, 'operator', made.key_id]);
    await admin.waitForSelector(`tr[data-key="${made.key_id}"]`);
    await shot(admin, 'admin');
    // Never again: once dismissed (or after leaving the view) the token is nowhere in the page.
    await admin.click('[data-testid="new-token"] button');
    expect(await admin.content()).not.toContain(token);
    await admin.click('nav a[data-view="overview"]');
    await admin.click('nav a[data-view="admin"]');
    await admin.waitForSelector(`tr[data-key="${made.key_id}"]`);
    expect(await admin.$('[data-testid="new-token"]')).toBeNull();
    expect(await admin.content()).not.toContain(token);

    // Patch role and label.
    await timed('patch key', async () => {
      await admin.click(`tr[data-key="${made.key_id}"] button:has-text("Edit")`);
      await admin.selectOption(`tr[data-key="${made.key_id}"] select[name="edit-key-role"]`, 'auditor');
      await admin.fill(`tr[data-key="${made.key_id}"] input[name="edit-key-label"]`, 'read-only now');
      await admin.click(`tr[data-key="${made.key_id}"] button:has-text("Save")`);
      await admin.waitForFunction((id) => document.querySelector(`tr[data-key="${id}"] [data-testid="key-role"]`)?.textContent === 'auditor', made.key_id);
    });
    expect(await admin.textContent(`tr[data-key="${made.key_id}"] [data-testid="key-label"]`)).toBe('read-only now');
    const patched = ((await call(a, 'GET', '/v1/admin/api-keys', ADMIN)).body.keys as { key_id: string; role: string; label: string }[]).find((k) => k.key_id === made.key_id)!;
    expect([patched.role, patched.label]).toEqual(['auditor', 'read-only now']);
    expect((await call(a, 'GET', '/v1/rbac/me', token)).body.role).toBe('auditor');

    // Revoke, after a confirmation: a dismissed one changes nothing.
    admin.once('dialog', (d) => void d.dismiss());
    await admin.click(`tr[data-key="${made.key_id}"] button:has-text("Revoke")`);
    expect((await call(a, 'GET', '/v1/rbac/me', token)).status).toBe(200);
    await timed('revoke key', async () => {
      admin.once('dialog', (d) => void d.accept());
      await admin.click(`tr[data-key="${made.key_id}"] button:has-text("Revoke")`);
      await admin.waitForSelector(`tr[data-key="${made.key_id}"]`, { state: 'detached' });
    });
    expect(((await call(a, 'GET', '/v1/admin/api-keys', ADMIN)).body.keys as { key_id: string }[]).map((k) => k.key_id)).not.toContain(made.key_id);
    expect((await call(a, 'GET', '/v1/rbac/me', token)).status).toBe(401);
  });

  it('an administrator adds a user, changes its role, disables it and removes it', async () => {
    await timed('create user', async () => {
      await admin.fill('input[name="new-user-id"]', 'tech-7');
      await admin.fill('input[name="new-user-name"]', 'Technician Seven');
      await admin.fill('input[name="new-user-email"]', 'tech7@example.test');
      await admin.selectOption('select[name="new-user-role"]', 'safety_officer');
      await admin.click('form[data-testid="create-user"] button[type="submit"]');
      await admin.waitForSelector('tr[data-user="tech-7"]');
    });
    const user = () => call(a, 'GET', '/v1/admin/users', ADMIN).then((r) => (r.body.users as { user_id: string; role: string; enabled: boolean; email: string; display_name: string }[]).find((u) => u.user_id === 'tech-7'));
    expect(await user()).toMatchObject({ display_name: 'Technician Seven', email: 'tech7@example.test', role: 'safety_officer', enabled: true });

    await admin.selectOption('tr[data-user="tech-7"] select[name="user-role"]', 'supervisor');
    await expect.poll(async () => (await user())?.role).toBe('supervisor');
    await admin.uncheck('tr[data-user="tech-7"] input[name="user-enabled"]');
    await expect.poll(async () => (await user())?.enabled).toBe(false);

    admin.once('dialog', (d) => void d.accept());
    await admin.click('tr[data-user="tech-7"] button:has-text("Remove")');
    await admin.waitForSelector('tr[data-user="tech-7"]', { state: 'detached' });
    expect(await user()).toBeUndefined();
  });

  it('an administrator saves the OIDC settings with a secret; the secret never appears in the page', async () => {
    await timed('oidc settings', async () => {
      await admin.check('input[name="oidc-enabled"]');
      await admin.fill('input[name="oidc-issuer"]', idp.issuer);
      await admin.fill('input[name="oidc-client-id"]', idp.clientId);
      await admin.fill('input[name="oidc-client-secret"]', idp.clientSecret);
      await admin.fill('input[name="oidc-redirect-uri"]', `${a.baseUrl}${CALLBACK_PATH}`);
      await admin.fill('textarea[name="oidc-group-map"]', 'ops-leads: supervisor\nvisitors: guest');
      await admin.click('form[data-testid="oidc-form"] button[type="submit"]');
      await admin.waitForSelector('[data-testid="oidc-saved"]');
    });
    const oidc = (await call(a, 'GET', '/v1/admin/oidc', ADMIN)).body;
    expect(oidc).toMatchObject({
      enabled: true,
      issuer: idp.issuer,
      client_id: idp.clientId,
      client_secret_set: true,
      oauth_ready: true,
      group_role_map: { 'ops-leads': 'supervisor', visitors: 'guest' },
      redirect_uri: `${a.baseUrl}${CALLBACK_PATH}`,
    });
    expect(await admin.textContent('[data-testid="secret-set"]')).toBe('set');
    expect(await admin.inputValue('input[name="oidc-client-secret"]')).toBe('');
    expect(await admin.content()).not.toContain(idp.clientSecret);
    // A reload reads the settings again: still only `client_secret_set`.
    await admin.reload();
    await admin.waitForSelector('[data-testid="secret-set"]');
    expect(await admin.content()).not.toContain(idp.clientSecret);

    // Saving another field without typing the secret keeps it (an empty secret is not sent).
    await admin.fill('textarea[name="oidc-group-map"]', 'ops-leads: supervisor\nvisitors: guest\nsafety: safety_officer');
    await admin.click('form[data-testid="oidc-form"] button[type="submit"]');
    await admin.waitForSelector('[data-testid="oidc-saved"]');
    const kept = (await call(a, 'GET', '/v1/admin/oidc', ADMIN)).body;
    expect([kept.client_secret_set, kept.group_role_map.safety]).toEqual([true, 'safety_officer']);
    expect(JSON.stringify(kept)).not.toContain(idp.clientSecret);
    await admin.context().close();
  });

  it('an operator sees no admin view, and the agent refuses its admin calls (403)', async () => {
    const page = await openPanel(browser, a.baseUrl, KEYS.operator, consoleErrors, '#/admin');
    const views = await page.$$eval('nav a', (as) => as.map((x) => x.getAttribute('data-view')));
    expect(views).not.toContain('admin');
    // The address names the admin view, but the panel opens the first view it may show.
    await page.waitForSelector('[data-view="overview"].view, section[data-view="overview"]');
    expect(await page.$('section[data-view="admin"]')).toBeNull();
    for (const [method, p, body] of [
      ['GET', '/v1/admin/api-keys', undefined],
      ['POST', '/v1/admin/api-keys', { role: 'operator' }],
      ['GET', '/v1/admin/users', undefined],
      ['GET', '/v1/admin/oidc', undefined],
      ['PUT', '/v1/admin/oidc', { enabled: false }],
    ] as const) {
      expect((await call(a, method, p, KEYS.operator, body)).status, `${method} ${p}`).toBe(403);
    }
    expect(KEY_IDS.operator).toBe('ops');
    await page.context().close();
  });
});

describe('OIDC sign-in through the landing page', () => {
  beforeAll(() => {
    if (CHROMIUM_MISSING) throw new Error(CHROMIUM_MISSING);
  });

  it('signs in with the real provider in a popup, ending signed in with the group-mapped role', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const page = await context.newPage();
    watchConsole(page, consoleErrors);
    await page.goto(`${a.baseUrl}/`);
    const button = await page.waitForSelector('[data-testid="oidc-signin"]');
    expect(await button.textContent()).toBe(`Sign in with ${new URL(idp.issuer).host}`);
    await shot(page, 'signin-oidc');

    // The state of this sign-in, as the popup's authorize request carries it.
    let state = '';
    context.on('request', (r) => {
      const u = new URL(r.url());
      if (u.origin === idp.issuer && u.searchParams.get('state')) state = u.searchParams.get('state')!;
    });
    const popup = await timed('oidc popup', async () => {
      const [p] = await Promise.all([page.waitForEvent('popup'), button.click()]);
      // The provider's development login form, then its consent form (test/helpers/oidc-test-provider.ts).
      await p.waitForURL((u) => u.origin === idp.issuer, { timeout: 10_000 });
      await p.waitForSelector('input[name="login"]');
      // A message from another origin than the landing page's (here the provider's page, in the very
      // popup, with the right state) is ignored: had the panel taken it, its sign-in would have failed
      // with the forged code instead of finishing below.
      expect(state).toMatch(/^svc-[0-9a-f]{32}$/);
      await p.evaluate((s) => window.opener.postMessage({ type: 'svc-oidc-oauth', code: 'forged-code', state: s }, '*'), state);
      await page.waitForTimeout(300);
      expect(await page.$('[role="alert"]')).toBeNull();
      await p.fill('input[name="login"]', 'erin-lead');
      await p.fill('input[name="password"]', 'any-password');
      await p.click('button[type="submit"]');
      await p.waitForSelector('button[type="submit"]');
      await p.click('button[type="submit"]');
      return p;
    });
    // The landing page posts the code to the panel and closes; the panel completes the sign-in.
    await timed('oidc completion', async () => {
      await page.waitForSelector('[data-testid="who"]', { timeout: 15_000 });
      if (!popup.isClosed()) await popup.waitForEvent('close', { timeout: 5_000 });
    });
    expect(popup.isClosed()).toBe(true);
    const who = await page.textContent('[data-testid="who"]');
    expect(who).toContain('supervisor');
    expect(who).toContain('erin-lead');
    expect(who).toContain('(OIDC)');
    // A supervisor is no administrator: no admin view.
    expect(await page.$$eval('nav a', (as) => as.map((x) => x.getAttribute('data-view')))).not.toContain('admin');

    // The credential kept by the tab is the agent's own session token, and the agent knows it as such.
    const stored = await page.evaluate(() => [window.sessionStorage.getItem('svc.panel.apiKey'), window.sessionStorage.getItem('svc.panel.credentialKind')]);
    expect(stored[1]).toBe('session');
    const me = await call(a, 'GET', '/v1/rbac/me', stored[0]!);
    expect(me.body).toMatchObject({ role: 'supervisor', auth_kind: 'session', user_id: 'erin-lead' });
    const users = (await call(a, 'GET', '/v1/admin/users', ADMIN)).body.users as { user_id: string; source: string; role: string }[];
    expect(users.find((u) => u.user_id === 'erin-lead')).toMatchObject({ source: 'oidc', role: 'supervisor' });
    // The provider's tokens never reached the page.
    for (const g of idp.grants) {
      if (g.access_token) expect(stored[0]).not.toBe(g.access_token);
    }

    // A minute before it expires the panel exchanges its session token for a new one (POST /v1/auth/session/refresh).
    await timed('session refresh', () =>
      page.waitForFunction((old) => { const t = window.sessionStorage.getItem('svc.panel.apiKey'); return t !== null && t !== old; }, stored[0], { timeout: 15_000 }),
    );
    const refreshed = await page.evaluate(() => window.sessionStorage.getItem('svc.panel.apiKey'));
    expect((await call(a, 'GET', '/v1/rbac/me', refreshed!)).body).toMatchObject({ role: 'supervisor', auth_kind: 'session', user_id: 'erin-lead' });
    expect(await page.textContent('[data-testid="who"]')).toContain('supervisor');

    // A reload signs in again with the kept session token; the overview loads with it.
    await page.reload();
    await page.waitForSelector('[data-testid="project-name"]');
    expect(await page.textContent('[data-testid="who"]')).toContain('supervisor');
    await shot(page, 'signin-oidc-done');

    // Sign-out forgets the token (a session JWT cannot be revoked through the API; it expires).
    await page.click('[data-testid="who"] button:has-text("Sign out")');
    await page.waitForSelector('input[name="api-key"]');
    expect(await page.evaluate(() => [window.sessionStorage.getItem('svc.panel.apiKey'), window.sessionStorage.getItem('svc.panel.credentialKind')])).toEqual([null, null]);
    await context.close();
  }, 40_000);

  it('logged no console errors', () => {
    expect(consoleErrors).toEqual([]);
  });
});
