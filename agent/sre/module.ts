import { defineModule } from '../core/module.js';
import { sreHandlers } from './handlers.js';
import { HealthHistory } from './health-history.js';
import { SreService } from './sre-service.js';

/**
 * Fleet health, the SRE rollup and the two background jobs behind it (docs/observability.md):
 * the health recorder (one sample every `SVC_SRE_SAMPLE_INTERVAL_SECS`, default 60 s, into the
 * persisted sample ring) and the SLO fast-burn monitor (`SVC_SRE_BURN_SCAN_INTERVAL_SECS`, off by
 * default). Both timers are unref'd (they never keep the process alive) and stop on close.
 */
export const sreModule = defineModule({
  name: 'sre',
  async open({ use, boot }) {
    const settings = use('settings');
    const history = HealthHistory.open(settings.stateDir, settings.sre.sampleRingSize);
    const sre = new SreService({
      settings: settings.sre,
      stateDir: settings.stateDir,
      devices: use('devices'),
      alerts: use('alerts'),
      incidents: use('incidents'),
      traces: use('traces'),
      project: use('project'),
      programs: use('programs'),
      history,
      log: boot.log,
    });
    const timers: NodeJS.Timeout[] = [];
    let closed = false;
    let sampling = false;
    const sampleMs = settings.sre.sampleIntervalSecs * 1000;
    if (sampleMs > 0) {
      // The first sample is taken one interval after start, not at start: evaluating the program
      // would load the analyses on every cold start, and a CLI command (which opens the same modules
      // without serving) finishes long before a tick, so it records nothing.
      timers.push(
        setInterval(() => {
          if (sampling || closed) return;
          sampling = true;
          sre
            .recordSample()
            .catch((err: Error) => boot.log(`sre: sample failed: ${err.message}`))
            .finally(() => (sampling = false));
        }, sampleMs).unref(),
      );
    }
    const burnMs = settings.sre.burnScanIntervalSecs * 1000;
    if (burnMs > 0) {
      timers.push(
        setInterval(() => {
          if (closed) return;
          try {
            sre.scanBurn();
          } catch (err) {
            boot.log(`sre: burn scan failed: ${(err as Error).message}`);
          }
        }, burnMs).unref(),
      );
    }
    return {
      provides: { sre },
      handlers: sreHandlers,
      close() {
        closed = true;
        for (const t of timers) clearInterval(t);
        history.close();
      },
    };
  },
});
