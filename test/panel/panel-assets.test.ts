import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isPanelPath, panelResponse } from '../../agent/transports/http/panel-assets.js';
import { tempDir } from '../helpers/agent-harness.js';

/** The panel's static step on its own (agent/transports/http/panel-assets.ts), with a folder of our making. */
describe('panel assets', () => {
  it('knows its paths and nothing else', () => {
    for (const p of ['/', '/control-center', '/control-center/', '/control-center-sw.js', '/control-center/assets/x.js']) expect(isPanelPath(p), p).toBe(true);
    for (const p of ['/control-center/other', '/index.html', '/metrics', '/v1/', '/favicon.ico']) expect(isPanelPath(p), p).toBe(false);
  });

  it('without a built panel: the page says how to build it (404), assets are unknown', async () => {
    const dir = tempDir('svc-panel-none-');
    const page = await panelResponse('GET', '/', {}, dir);
    expect(page!.status).toBe(404);
    expect(await page!.text()).toContain('npm run build');
    expect(await panelResponse('GET', '/control-center/assets/app.js', {}, dir)).toBeNull();
    expect(await panelResponse('GET', '/control-center-sw.js', {}, dir)).toBeNull();
  });

  it('serves only plain names inside assets/, with types and cache headers; HEAD has no body', async () => {
    const dir = tempDir('svc-panel-built-');
    fs.mkdirSync(path.join(dir, 'assets'));
    fs.writeFileSync(path.join(dir, 'index.html'), '<!doctype html>');
    fs.writeFileSync(path.join(dir, 'secret.txt'), 'outside assets');
    fs.writeFileSync(path.join(dir, 'assets', 'app-ABCDEFGH.js'), 'export {}');
    fs.writeFileSync(path.join(dir, 'assets', 'icon.svg'), '<svg/>');
    fs.writeFileSync(path.join(dir, 'assets', '.env'), 'x');
    const js = (await panelResponse('GET', '/control-center/assets/app-ABCDEFGH.js', {}, dir))!;
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(js.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const svg = (await panelResponse('GET', '/control-center/assets/icon.svg', {}, dir))!;
    expect(svg.headers.get('content-type')).toBe('image/svg+xml');
    expect(svg.headers.get('cache-control')).toBe('public, max-age=3600');
    const head = (await panelResponse('HEAD', '/', {}, dir))!;
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe('15');
    expect(await head.text()).toBe('');
    for (const p of ['/control-center/assets/../secret.txt', '/control-center/assets/..%2Fsecret.txt', '/control-center/assets/.env', '/control-center/assets/', '/control-center/assets/sub/x.js', '/control-center/assets/a\\b']) {
      expect(await panelResponse('GET', p, {}, dir), p).toBeNull();
    }
    const redirect = (await panelResponse('GET', '/control-center/', {}, dir))!;
    expect([redirect.status, redirect.headers.get('location')]).toEqual([308, '../control-center']);
  });
});
