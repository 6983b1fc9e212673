import { lazy } from '../core/lazy.js';
import { defineModule } from '../core/module.js';
import { analyticsHandlers } from './handlers.js';

/**
 * Program analytics (docs/analytics.md). No start-up duty: the service and the program analyses
 * behind it load on the first `/v1/analytics/*` request. Opens after the SRE module, whose recorded
 * readiness samples are the history trends and forecasts read.
 */
export const analyticsModule = defineModule({
  name: 'analytics',
  open({ use }) {
    const deps = {
      project: use('project'),
      sre: use('sre'),
      devices: use('devices'),
      alerts: use('alerts'),
      recovery: use('recovery'),
      stateDir: use('settings').stateDir,
    };
    const analytics = lazy(async () => {
      const { AnalyticsService } = await import('./analytics-service.js');
      return new AnalyticsService(deps);
    });
    return { provides: { analytics }, handlers: analyticsHandlers };
  },
});
