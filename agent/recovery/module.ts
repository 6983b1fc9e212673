import { defineModule } from '../core/module.js';
import { recoveryHandlers } from './handlers.js';
import { RecoveryService } from './recovery-service.js';
import { openRecoveryStore } from './recovery-store.js';

/** The recovery orchestrator (docs/recovery.md): plans over the registry and the program's heal analysis, forced executions, evidence history. */
export const recoveryModule = defineModule({
  name: 'recovery',
  async open({ use }) {
    const project = use('project');
    const store = await openRecoveryStore(use('settings').stateDir);
    const recovery = new RecoveryService({
      store,
      entities: use('entities'),
      programs: use('programs'),
      telemetry: use('telemetry'),
      devices: use('devices'),
      alerts: use('alerts'),
      bus: use('bus'),
      deviceActions: use('deviceActions'),
      operator: use('operator'),
      configTree: () => project.config?.tree ?? null,
    });
    return { provides: { recovery }, handlers: recoveryHandlers, close: () => recovery.close() };
  },
});
