import { defineModule } from '../core/module.js';
import { DecisionService } from './decision-service.js';
import { decisionHandlers } from './handlers.js';

/** Distributed decisions: program decision policies, simulation, escalations and the fleet decision mesh. */
export const decisionsModule = defineModule({
  name: 'decisions',
  async open({ use }) {
    const settings = use('settings');
    const programs = use('programs');
    const entities = use('entities');
    const decisions = await DecisionService.open({
      workspace: () => programs.workspace,
      stateDir: settings.stateDir,
      settings: settings.decisions,
      prepareEntities: () => programs.prepareFacts(),
      entity: (id) => {
        try {
          const record = entities.get(id) as { trust_status?: string | null; metadata?: Record<string, string> };
          return { trust_status: record.trust_status ?? null, metadata: record.metadata ?? {} };
        } catch {
          return null;
        }
      },
    });
    // Program runs read grants from, and register pending escalations in, this module's store.
    programs.setEscalations(decisions.escalationPort());
    return { provides: { decisions }, handlers: decisionHandlers, close: () => decisions.flush() };
  },
});
