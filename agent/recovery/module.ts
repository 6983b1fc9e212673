import { lazy } from '../core/lazy.js';
import { defineModule } from '../core/module.js';
import { recoveryHandlers } from './handlers.js';

/** The recovery orchestrator (docs/recovery.md): plans over the registry and the program's heal analysis, forced executions, evidence history. */
export const recoveryModule = defineModule({
  name: 'recovery',
  open({ use }) {
    const project = use('project');
    const deps = {
      entities: use('entities'),
      programs: use('programs'),
      telemetry: use('telemetry'),
      devices: use('devices'),
      alerts: use('alerts'),
      bus: use('bus'),
      deviceActions: use('deviceActions'),
      operator: use('operator'),
      configTree: () => project.config?.tree ?? null,
    };
    const stateDir = use('settings').stateDir;
    // Built on the first recovery request (core/lazy.ts): the orchestrator has no start-up duty.
    const recovery = lazy(async () => {
      const [{ RecoveryService }, { openRecoveryStore }] = await Promise.all([import('./recovery-service.js'), import('./recovery-store.js')]);
      return new RecoveryService({ ...deps, store: await openRecoveryStore(stateDir) });
    });
    return { provides: { recovery }, handlers: recoveryHandlers, close: () => recovery.loaded()?.close() };
  },
});
