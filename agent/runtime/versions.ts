import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root: the nearest folder above this module holding our package.json (source or dist). */
export const PACKAGE_ROOT: string = (() => {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = path.join(dir, 'package.json');
    if (fs.existsSync(candidate)) {
      try {
        if ((JSON.parse(fs.readFileSync(candidate, 'utf8')) as { name?: string }).name === 'svc-control-center') return dir;
      } catch {
        /* keep walking */
      }
    }
    const parent = path.dirname(dir);
    if (parent === dir) return process.cwd();
    dir = parent;
  }
})();

/** Implementation version: the package version, read once. */
export const SVC_VERSION: string = (() => {
  try {
    const pkg = JSON.parse(fs.readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version?: string };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
})();

/** The built web panel (scripts/bundle-panel.mjs, docs/panel.md): page, service worker and assets. */
export const PANEL_DIR: string = path.join(PACKAGE_ROOT, 'dist', 'panel');

/**
 * The web panel's version, from the `version.json` its build writes (the package version it was built
 * from); `0.0.0` when the panel was not built, as the reference reports without a UI package.
 */
export const CONTROL_CENTER_UI_VERSION: string = (() => {
  try {
    const v = (JSON.parse(fs.readFileSync(path.join(PANEL_DIR, 'version.json'), 'utf8')) as { version?: unknown }).version;
    return typeof v === 'string' && /^\d+\.\d+\.\d+/.test(v) ? v : '0.0.0';
  } catch {
    return '0.0.0';
  }
})();
