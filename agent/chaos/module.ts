import { defineModule } from '../core/module.js';
import { ChaosService } from './chaos-service.js';
import { ChaosExperiments } from './experiments.js';
import { chaosHandlers } from './handlers.js';

/** Chaos experiments: static (program analysis) and live (fault injection through DeviceActions). */
export const chaosModule = defineModule({
  name: 'chaos',
  async open({ use }) {
    const settings = use('settings');
    const experiments = await ChaosExperiments.open(settings.stateDir, { bus: use('bus'), devices: use('devices'), actions: use('deviceActions') });
    const chaos = new ChaosService(use('programs'), experiments);
    return { provides: { chaos }, handlers: chaosHandlers, close: () => experiments.close() };
  },
});
