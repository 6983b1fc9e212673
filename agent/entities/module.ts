import { defineModule } from '../core/module.js';
import { EntityService } from './entity-service.js';
import { entityHandlers } from './handlers.js';

/** The entity registry: configuration, device pool and program facts as one graph, plus the operator's overlay. */
export const entitiesModule = defineModule({
  name: 'entities',
  async open({ use, boot }) {
    const devices = use('devices');
    const programs = use('programs');
    const alerts = use('alerts');
    const audit = use('audit');
    const entities = await EntityService.open({
      overlayFile: use('settings').entityOverlayPath,
      config: use('project').config,
      devices: () => devices.list(),
      // Robots and missions of the --program (entity operations await programs.prepareFacts()).
      programFacts: boot.programFacts ?? (() => programs.programFacts()),
      bus: use('bus'),
      alerts: () => alerts.list(),
      // Streamed from the chain's files: no copy of the chain is kept in memory.
      auditRecords: () => audit.chain.records(),
      warn: (m) => boot.log(`warning: ${m}`),
    });
    return { provides: { entities }, handlers: entityHandlers, close: () => entities.flush() };
  },
});
