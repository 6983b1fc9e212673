import { defineModule } from '../core/module.js';
import { FleetService } from './fleet-service.js';
import { fleetHandlers } from './handlers.js';

/** Fleet views over the configuration and the device pool: robots, trees, reports, failover, package trust, and their handlers. */
export const fleetModule = defineModule({
  name: 'fleet',
  open({ use }) {
    const devices = use('devices');
    const project = use('project');
    const deviceHub = use('deviceHub');
    return {
      provides: { fleet: new FleetService({ devices: () => devices.list(), config: () => project.config, linkStats: () => deviceHub.stats() }) },
      handlers: fleetHandlers,
    };
  },
});
