import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';

/**
 * What every browser test of the panel shares (docs/panel.md § Tests): Debian's chromium driven by
 * playwright-core, an agent serving the demo project with keys per role, sign-in, screenshots under
 * test-results/panel/ and a console-error log that each file asserts empty at its end.
 */
export const REPO = path.resolve(__dirname, '../..');
export const CHROMIUM = process.env.SVC_TEST_CHROMIUM ?? '/usr/bin/chromium';
export const SHOTS = path.join(REPO, 'test-results', 'panel');
const PANEL_INDEX = path.join(REPO, 'dist', 'panel', 'index.html');

export const CHROMIUM_MISSING = fs.existsSync(CHROMIUM)
  ? null
  : `Chromium not found at ${CHROMIUM}: the panel's browser tests need Debian's chromium (apt-get install chromium; scripts/test.sh installs it) or SVC_TEST_CHROMIUM=/path/to/chromium`;

/** One key per role the panel tests sign in with (64 hex characters each, as the agent requires). */
export const KEYS = {
  administrator: 'ad'.repeat(32),
  supervisor: '5e'.repeat(32),
  operator: 'e7'.repeat(32),
  auditor: 'a9'.repeat(32),
  guest: '9e'.repeat(32),
} as const;
/** key_id of each role's key, as `GET /v1/rbac/me` reports it. */
export const KEY_IDS: Record<keyof typeof KEYS, string> = { administrator: 'admin', supervisor: 'super', operator: 'ops', auditor: 'audit', guest: 'guest' };

/** Builds dist/panel when this checkout has not (the bundle takes well under a second). */
export function ensurePanelBuilt(): void {
  if (!fs.existsSync(PANEL_INDEX)) execFileSync(process.execPath, [path.join(REPO, 'scripts', 'bundle-panel.mjs')], { cwd: REPO, stdio: 'inherit' });
}

/** A copy of demo/ with a keys file holding KEYS; `extraEnv` is added to the agent's environment. */
export async function startPanelAgent(extraEnv: Record<string, string> = {}): Promise<{ agent: RunningAgent; root: string }> {
  ensurePanelBuilt();
  fs.mkdirSync(SHOTS, { recursive: true });
  const root = tempDir('svc-panel-');
  fs.cpSync(path.join(REPO, 'demo'), root, { recursive: true });
  const keys = path.join(root, 'keys.json');
  fs.writeFileSync(keys, JSON.stringify(Object.entries(KEYS).map(([role, token]) => ({ key_id: KEY_IDS[role as keyof typeof KEYS], token, role }))));
  const agent = await startAgent({
    configPath: path.join(root, 'svc.toml'),
    programPath: path.join(root, 'programs', 'patrol.sd'),
    env: { SVC_API_KEYS_FILE: keys, ...extraEnv },
  });
  return { agent, root };
}

export function launchChromium(): Promise<Browser> {
  if (CHROMIUM_MISSING) throw new Error(CHROMIUM_MISSING);
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
}

/** Records console errors and uncaught page errors of a page into `sink`. */
export function watchConsole(page: Page, sink: string[]): void {
  page.on('console', (m) => {
    if (m.type() === 'error') sink.push(`${m.text()} @ ${m.location().url}`);
  });
  page.on('pageerror', (e) => sink.push(`pageerror: ${e.message}`));
}

/** A new browser context signed in with `key` at `baseUrl` (the agent's, or the relay's `/agents/<id>`). */
export async function openPanel(browser: Browser, baseUrl: string, key: string, consoleErrors: string[], hash = ''): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  const page = await context.newPage();
  watchConsole(page, consoleErrors);
  await page.goto(`${baseUrl}/${hash}`);
  await page.fill('input[name="api-key"]', key);
  await page.click('button[type="submit"]');
  await page.waitForSelector('[data-testid="who"]');
  return page;
}

export function shot(page: Page, name: string): Promise<Buffer> {
  return page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

/** JSON request to the agent with a role's key. */
export function call(agent: RunningAgent, method: string, p: string, key: string, body?: unknown) {
  return agent.json(p, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

/**
 * How long each step of a browser test took: `timed(label, fn)` records it, `report()` prints the
 * table once at the end (stderr), so slow steps show in CI logs without being timed assertions.
 */
export function stepTimer(title: string) {
  const timings: Record<string, number> = {};
  return {
    timings,
    async timed<T>(label: string, fn: () => Promise<T>): Promise<T> {
      const t0 = performance.now();
      try {
        return await fn();
      } finally {
        timings[label] = Math.round(performance.now() - t0);
      }
    },
    report(): void {
      if (Object.keys(timings).length) process.stderr.write(`${title} browser timings (ms): ${JSON.stringify(timings)}\n`);
    },
  };
}
