import { defineModule } from '../core/module.js';
import { meshHandlers } from './handlers.js';
import { MeshService } from './mesh-service.js';
import { probeMqttBroker } from './mqtt-probe.js';

/** The entity mesh over the registry and the persisted mesh store, and its handlers. */
export const meshModule = defineModule({
  name: 'mesh',
  async open({ use }) {
    const settings = use('settings');
    const entities = use('entities');
    const programs = use('programs');
    const deviceHub = use('deviceHub');
    const mesh = await MeshService.open(settings.stateDir, {
      entities,
      prepare: () => programs.prepareFacts(),
      linkStats: () => deviceHub.stats(),
      bus: use('bus'),
      settings: settings.mesh,
      probeMqtt: probeMqttBroker,
    });
    return { provides: { mesh }, handlers: meshHandlers, close: () => mesh.close() };
  },
});
