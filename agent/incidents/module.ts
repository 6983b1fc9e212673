import { defineModule } from '../core/module.js';
import { incidentHandlers } from './handlers.js';
import { IncidentService } from './incidents.js';

/** SRE incidents, opened by critical alerts. */
export const incidentsModule = defineModule({
  name: 'incidents',
  async open({ use }) {
    const incidents = await IncidentService.open(use('settings').stateDir, use('bus'));
    return { provides: { incidents }, handlers: incidentHandlers, close: () => incidents.flush() };
  },
});
