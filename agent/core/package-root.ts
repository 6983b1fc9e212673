import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Where the package lives, for the agent and the relay alike (both serve the built panel,
 * docs/panel.md): the nearest folder above this module holding our package.json (source or dist).
 */
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

/** The built web panel (scripts/bundle-panel.mjs, docs/panel.md): page, service worker and assets. */
export const PANEL_DIR: string = path.join(PACKAGE_ROOT, 'dist', 'panel');
