import { lazy } from '../core/lazy.js';
import { defineModule } from '../core/module.js';
import { spacesHandlers } from './handlers.js';

/**
 * Smart spaces (docs/spaces.md): nothing to do at start and nothing stored, so the service is
 * built on the first request from the configuration, the device pool, telemetry, alerts and incidents.
 */
export const spacesModule = defineModule({
  name: 'spaces',
  open({ use }) {
    const deps = {
      project: use('project'),
      devices: use('devices'),
      telemetry: use('telemetry'),
      alerts: use('alerts'),
      incidents: use('incidents'),
      gatewayProbeTimeoutMs: use('settings').spaces.gatewayProbeTimeoutMs,
    };
    const spaces = lazy(async () => new (await import('./spaces-service.js')).SpacesService(deps));
    return { provides: { spaces }, handlers: spacesHandlers };
  },
});
