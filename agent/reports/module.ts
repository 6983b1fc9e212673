import { lazy } from '../core/lazy.js';
import { defineModule } from '../core/module.js';
import { reportHandlers } from './handlers.js';
import { ReportScheduler } from './report-scheduler.js';

/**
 * Executive reporting (docs/operations.md § Reports): scorecard, digital thread, exports and the
 * report delivery scheduler. The service loads on the first report request or scheduler tick.
 */
export const reportsModule = defineModule({
  name: 'reports',
  open({ use, boot }) {
    const settings = use('settings');
    const deps = { project: use('project'), devices: use('devices'), outbound: use('outbound'), stateDir: settings.stateDir, log: boot.log };
    const reports = lazy(async () => {
      const [{ ReportsService }, { openScheduleStore }] = await Promise.all([import('./reports-service.js'), import('./schedule-store.js')]);
      return new ReportsService({ ...deps, store: await openScheduleStore(settings.stateDir) });
    });
    const scheduler = new ReportScheduler(settings.reportScheduleIntervalSecs, async () => (await reports.get()).deliverDue(), boot.log);
    scheduler.start();
    return {
      provides: { reports },
      handlers: reportHandlers,
      close: async () => {
        await scheduler.stop();
        await reports.loaded()?.close();
      },
    };
  },
});
