import { defineModule } from '../core/module.js';
import { AlertingService } from './alerting-service.js';
import { alertingHandlers } from './handlers.js';

/**
 * Alert delivery: installs the channel dispatcher into the alert pipeline at start (so it is not
 * lazy), after the incidents it reads for PagerDuty bodies. nodemailer loads only with the first e-mail.
 */
export const alertingModule = defineModule({
  name: 'alerting',
  async open({ use, boot }) {
    const settings = use('settings');
    const alerting = await AlertingService.open({
      stateDir: settings.stateDir,
      settings: settings.alerting,
      outbound: use('outbound'),
      alerts: use('alerts'),
      incidents: use('incidents'),
      log: boot.log,
    });
    return { provides: { alerting }, handlers: alertingHandlers, close: () => alerting.close() };
  },
});
