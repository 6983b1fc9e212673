import { lazy } from '../core/lazy.js';
import { defineModule } from '../core/module.js';
import { hriHandlers } from './handlers.js';

/** HRI sessions (docs/twins.md § HRI sessions): the session store opens on the first HRI request. */
export const hriModule = defineModule({
  name: 'hri',
  open({ use, boot }) {
    const settings = use('settings');
    const deps = { project: use('project'), bus: use('bus'), telemetry: use('telemetry') };
    const hri = lazy(async () => {
      const [{ HriService }, { openHriStore }] = await Promise.all([import('./hri-service.js'), import('./hri-store.js')]);
      return new HriService({ ...deps, store: await openHriStore(settings.stateDir, (m) => boot.log(`warning: ${m}`)) });
    });
    return { provides: { hri }, handlers: hriHandlers, close: () => hri.loaded()?.close() };
  },
});
