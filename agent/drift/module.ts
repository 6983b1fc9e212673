import { lazy } from '../core/lazy.js';
import { defineModule } from '../core/module.js';
import { driftHandlers } from './handlers.js';

/**
 * Operational drift (docs/operations.md § Drift): the service is built on first use; with
 * `SVC_DRIFT_SCAN_INTERVAL_SECS` > 0 a scheduler scans every interval (first run after one interval)
 * with source `scheduled`. A tick that fails (no configuration, no snapshot) is skipped, and a tick
 * never overlaps the previous one.
 */
export const driftModule = defineModule({
  name: 'drift',
  open({ use, boot }) {
    const settings = use('settings');
    const deps = {
      settings: settings.drift,
      stateDir: settings.stateDir,
      deployAgentsFile: settings.deployAgentsFile,
      project: use('project'),
      configControl: use('configControl'),
      outbound: use('outbound'),
      alerts: use('alerts'),
    };
    const drift = lazy(async () => {
      const { DriftService } = await import('./drift-service.js');
      return DriftService.open(deps);
    });
    let timer: NodeJS.Timeout | null = null;
    let running: Promise<unknown> | null = null;
    if (settings.drift.scanIntervalSecs > 0) {
      timer = setInterval(() => {
        if (running) return;
        running = drift
          .get()
          .then((d) => d.scan({ source: 'scheduled' }))
          .catch((err: unknown) => boot.log(`drift scheduler: scan skipped: ${(err as Error).message}`))
          .finally(() => (running = null));
      }, settings.drift.scanIntervalSecs * 1000);
      // The scheduler never keeps a finished process alive.
      timer.unref();
    }
    return {
      provides: { drift },
      handlers: driftHandlers,
      async close() {
        if (timer) clearInterval(timer);
        await running;
        await drift.loaded()?.close();
      },
    };
  },
});
