import { lazy } from '../core/lazy.js';
import { defineModule } from '../core/module.js';
import { twinHandlers } from './handlers.js';

/**
 * Mission twins (docs/twins.md). Opened on the first twin request: the store is small, but a
 * snapshot parses a program, which stays off the agent's start.
 */
export const twinsModule = defineModule({
  name: 'twins',
  open({ use, boot }) {
    const settings = use('settings');
    const deps = { project: use('project'), sre: use('sre'), stateDir: settings.stateDir, tenantId: settings.tenantId };
    const twins = lazy(async () => {
      const [{ TwinService }, { openTwinStore }] = await Promise.all([import('./twin-service.js'), import('./twin-store.js')]);
      return new TwinService({ ...deps, store: await openTwinStore(settings.stateDir, (m) => boot.log(`warning: ${m}`)) });
    });
    return { provides: { twins }, handlers: twinHandlers, close: () => twins.loaded()?.close() };
  },
});
