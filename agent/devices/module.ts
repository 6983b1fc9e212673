import { defineModule } from '../core/module.js';
import { resolveHalSettings } from '../settings/hal.js';
import { canFactory } from './attachments/can-factory.js';
import { mqttFactory } from './attachments/mqtt-factory.js';
import { serialFactory } from './attachments/serial-factory.js';
import { DeviceActionsService } from './device-actions-service.js';
import { DeviceHub } from './device-hub.js';
import { DevicePool } from './device-pool.js';
import { DeviceRegistry } from './device-registry.js';
import { deviceHandlers } from './handlers.js';
import { HealthMonitor } from './health-monitor.js';
import { ReadinessRuns } from './readiness-runs.js';

/** The device pool: registry, health monitor, lifecycle workflows, the HAL attachments and their handlers. */
export const devicesModule = defineModule({
  name: 'devices',
  async open({ use, boot }) {
    const settings = use('settings');
    const project = use('project');
    const bus = use('bus');
    const alerts = use('alerts');
    const telemetry = use('telemetry');
    const hal = resolveHalSettings(settings.hal, project.config);
    const devices = await DeviceRegistry.open(settings.stateDir, project.config);
    const health = new HealthMonitor({ devices, bus, alerts, telemetry }, hal.offlineAfterMs);
    const deviceHub = new DeviceHub({ registry: devices, health, telemetry, bus, hal, log: boot.log });
    deviceHub.register(mqttFactory(hal));
    deviceHub.register(serialFactory(hal));
    deviceHub.register(canFactory(hal));
    const devicePool = new DevicePool(devices, health, alerts, project.config);
    const deviceActions = new DeviceActionsService({ hub: deviceHub, registry: devices, pool: devicePool, health });
    const readinessRuns = new ReadinessRuns(settings.stateDir, (m) => boot.log(`warning: ${m}`));
    return {
      provides: { hal, devices, deviceHub, devicePool, deviceActions, readinessRuns },
      handlers: deviceHandlers,
      async close() {
        await readinessRuns.close();
        await deviceHub.close();
        await devices.flush();
      },
    };
  },
});
