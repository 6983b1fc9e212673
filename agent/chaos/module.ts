import { lazy } from '../core/lazy.js';
import { defineModule } from '../core/module.js';
import { chaosHandlers } from './handlers.js';

/** Chaos experiments: static (program analysis) and live (fault injection through DeviceActions). */
export const chaosModule = defineModule({
  name: 'chaos',
  open({ use }) {
    const settings = use('settings');
    const deps = { bus: use('bus'), devices: use('devices'), actions: use('deviceActions') };
    const programs = use('programs');
    // Built on the first chaos request (core/lazy.ts); experiments a stopped agent left running are
    // reported as interrupted then.
    const chaos = lazy(async () => {
      const [{ ChaosService }, { ChaosExperiments }] = await Promise.all([import('./chaos-service.js'), import('./experiments.js')]);
      return new ChaosService(programs, await ChaosExperiments.open(settings.stateDir, deps));
    });
    return { provides: { chaos }, handlers: chaosHandlers, close: () => chaos.loaded()?.experiments.close() };
  },
});
