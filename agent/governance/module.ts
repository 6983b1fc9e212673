import { lazy } from '../core/lazy.js';
import { defineModule } from '../core/module.js';
import { governanceHandlers } from './handlers.js';

/**
 * Operational governance and compliance (docs/governance.md). Nothing to do at start: the service,
 * its stores and the evidence log open on the first request.
 */
export const governanceModule = defineModule({
  name: 'governance',
  open({ use }) {
    const programs = use('programs');
    const settings = use('settings');
    const deps = {
      project: use('project'),
      entities: use('entities'),
      prepareFacts: () => programs.prepareFacts(),
      stateDir: settings.stateDir,
      settings: settings.governance,
    };
    const governance = lazy(async () => {
      const [{ GovernanceService }, { openGovernanceStores }] = await Promise.all([import('./governance-service.js'), import('./governance-store.js')]);
      return new GovernanceService({ ...deps, stores: await openGovernanceStores(settings.stateDir) });
    });
    return { provides: { governance }, handlers: governanceHandlers, close: () => governance.loaded()?.close() };
  },
});
