import { lazy } from '../core/lazy.js';
import { defineModule } from '../core/module.js';
import { spacesHandlers } from './handlers.js';
import { ReadingsIndex } from './readings-index.js';
import { spaceDeviceIds } from './spaces-config.js';

/**
 * Smart spaces (docs/spaces.md). Nothing is stored; the service is built on the first request.
 * What runs from the start is the readings index of the configured smart-space devices (seeded
 * from the telemetry ring, then fed as telemetry arrives), and only when the configuration names
 * such devices.
 */
export const spacesModule = defineModule({
  name: 'spaces',
  open({ use }) {
    const project = use('project');
    const telemetry = use('telemetry');
    const watched = project.config ? spaceDeviceIds(project.config) : new Set<string>();
    const readings = new ReadingsIndex(watched);
    let unsubscribe: () => void = () => undefined;
    if (watched.size > 0) {
      for (const e of telemetry.ring.all()) readings.add(e);
      const off = telemetry.ring.onAppend((e) => readings.add(e));
      unsubscribe = () => {
        off();
      };
    }
    const deps = {
      project,
      devices: use('devices'),
      telemetry,
      readings,
      alerts: use('alerts'),
      incidents: use('incidents'),
      gatewayProbeTimeoutMs: use('settings').spaces.gatewayProbeTimeoutMs,
    };
    const spaces = lazy(async () => new (await import('./spaces-service.js')).SpacesService(deps));
    return { provides: { spaces }, handlers: spacesHandlers, close: () => unsubscribe() };
  },
});
