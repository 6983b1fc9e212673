import { lazy } from '../core/lazy.js';
import { defineModule } from '../core/module.js';
import { meshHandlers } from './handlers.js';

/** The entity mesh over the registry and the persisted mesh store, and its handlers. */
export const meshModule = defineModule({
  name: 'mesh',
  open({ use }) {
    const settings = use('settings');
    const entities = use('entities');
    const programs = use('programs');
    const deviceHub = use('deviceHub');
    const bus = use('bus');
    // Built on the first mesh request (core/lazy.ts): the mesh store has no start-up duty.
    const mesh = lazy(async () => {
      const [{ MeshService }, { probeMqttBroker }] = await Promise.all([import('./mesh-service.js'), import('./mqtt-probe.js')]);
      return MeshService.open(settings.stateDir, {
        entities,
        prepare: () => programs.prepareFacts(),
        linkStats: () => deviceHub.stats(),
        bus,
        settings: settings.mesh,
        probeMqtt: probeMqttBroker,
      });
    });
    return { provides: { mesh }, handlers: meshHandlers, close: () => mesh.loaded()?.close() };
  },
});
