import fs from 'node:fs';
import path from 'node:path';
import { PACKAGE_ROOT, PANEL_DIR } from '../core/package-root.js';

// The package root and the panel folder are shared with the relay, which may not import the runtime.
export { PACKAGE_ROOT, PANEL_DIR } from '../core/package-root.js';

/** Implementation version: the package version, read once. */
export const SVC_VERSION: string = (() => {
  try {
    const pkg = JSON.parse(fs.readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version?: string };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
})();

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
