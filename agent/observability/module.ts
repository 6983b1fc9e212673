import { defineModule } from '../core/module.js';
import { AlertService } from './alerts.js';
import { alertHandlers } from './handlers.js';
import { openTraceRing } from './traces.js';

/** The request trace ring and the alert pipeline. */
export const observabilityModule = defineModule({
  name: 'observability',
  async open({ use, boot }) {
    const settings = use('settings');
    const traces = await openTraceRing(settings.stateDir, settings.rings.traces);
    const alerts = await AlertService.open(settings.stateDir, settings.rings.alerts, settings.alertDedupSecs, use('bus'), boot.log);
    return {
      provides: { traces, alerts },
      handlers: alertHandlers,
      async close() {
        await traces.close();
        await alerts.close();
      },
    };
  },
});
