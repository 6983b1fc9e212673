import fs from 'node:fs/promises';
import path from 'node:path';
import { PANEL_DIR } from './package-root.js';

/**
 * The web panel's files (docs/panel.md), served the same way by the agent (its request pipeline,
 * agent/transports/http/panel-assets.ts) and by the relay (relay/server.ts): transport-neutral, a
 * path in and a fetch `Response` out. The panel's files, built into dist/panel by scripts/bundle-panel.mjs: the page
 * at `/` and `/control-center`, the service worker at `/control-center-sw.js`, everything else under
 * `/control-center/assets/`. Only plain file names inside that one folder are served (no `/`, `\`,
 * `..` or leading dot), so no path reaches outside it.
 */
export const PANEL_PAGE_PATHS: ReadonlySet<string> = new Set(['/', '/control-center']);
export const PANEL_ASSET_PREFIX = '/control-center/assets/';
export const PANEL_SW_PATH = '/control-center-sw.js';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.webmanifest': 'application/manifest+json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.txt': 'text/plain; charset=utf-8',
};

/** Script, style and their maps carry a content hash in their name: cached for a year. */
const HASHED = /-[A-Z0-9]{8}\.(js|css)(\.map)?$/;
const SAFE_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/;

/** The page's policy: its own scripts and styles only (uPlot sets inline styles), the API and stream on the same origin. */
const PAGE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self' ws: wss:; manifest-src 'self'; worker-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

export interface PanelServeOptions {
  /**
   * Marks the page with `<meta name="svc-served-by" content="…">`: the relay serves the same build
   * with `relay`, and the panel then opens its fleet view (docs/panel.md § Served by a relay). The
   * agent adds nothing.
   */
  servedBy?: PanelMark;
}

/** `relay`: the relay's own page; `relay-agent`: an agent's page forwarded by the relay at `/agents/<id>/`. */
export type PanelMark = 'relay' | 'relay-agent';

/** The page with the served-by mark right after `<head>` (the build's page always has one). */
export function markServedBy(page: Buffer, servedBy: PanelMark): Buffer {
  const html = page.toString('utf8');
  const at = html.indexOf('<head>');
  if (at < 0) return page;
  const mark = `<meta name="svc-served-by" content="${servedBy}">`;
  return Buffer.from(`${html.slice(0, at + 6)}${mark}${html.slice(at + 6)}`, 'utf8');
}

export function isPanelPath(pathname: string): boolean {
  return PANEL_PAGE_PATHS.has(pathname) || pathname === '/control-center/' || pathname === PANEL_SW_PATH || pathname.startsWith(PANEL_ASSET_PREFIX);
}

/**
 * The answer for a panel path (GET or HEAD; `isPanelPath` is true): the file, a redirect from
 * `/control-center/` (relative, so it holds under a prefix such as the relay's), or null when there is no such file (the caller answers 404).
 */
export async function panelResponse(
  method: string,
  pathname: string,
  headers: Record<string, string>,
  dir: string = PANEL_DIR,
  options: PanelServeOptions = {},
): Promise<Response | null> {
  if (pathname === '/control-center/') return new Response(null, { status: 308, headers: { ...headers, location: '../control-center' } });
  let file: string;
  let cache: string;
  if (PANEL_PAGE_PATHS.has(pathname)) {
    file = path.join(dir, 'index.html');
    cache = 'no-cache';
  } else if (pathname === PANEL_SW_PATH) {
    file = path.join(dir, 'control-center-sw.js');
    cache = 'no-cache';
  } else {
    const name = pathname.slice(PANEL_ASSET_PREFIX.length);
    if (!SAFE_NAME.test(name)) return null;
    file = path.join(dir, 'assets', name);
    cache = HASHED.test(name) ? 'public, max-age=31536000, immutable' : 'public, max-age=3600';
  }
  let body: Buffer;
  try {
    body = await fs.readFile(file);
  } catch {
    if (PANEL_PAGE_PATHS.has(pathname)) return notBuilt(headers);
    return null;
  }
  if (options.servedBy && PANEL_PAGE_PATHS.has(pathname)) body = markServedBy(body, options.servedBy);
  const type = CONTENT_TYPES[path.extname(file)] ?? 'application/octet-stream';
  const out: Record<string, string> = {
    ...headers,
    'content-type': type,
    'content-length': String(body.length),
    'cache-control': cache,
    'x-content-type-options': 'nosniff',
  };
  if (type.startsWith('text/html')) {
    out['content-security-policy'] = PAGE_CSP;
    out['x-frame-options'] = 'DENY';
    out['referrer-policy'] = 'no-referrer';
  }
  return new Response(method === 'HEAD' ? null : new Uint8Array(body), { status: 200, headers: out });
}

/** `/` of an agent whose package was built without the panel (e.g. the TypeScript compile only). */
function notBuilt(headers: Record<string, string>): Response {
  const html =
    '<!doctype html><meta charset="utf-8"><title>svc control center</title><p>The web panel is not built into this agent. Run <code>npm run build</code> (docs/panel.md); the API is at <a href="v1/instance">/v1</a>.</p>';
  return new Response(html, { status: 404, headers: { ...headers, 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' } });
}
