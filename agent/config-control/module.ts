import { lazy } from '../core/lazy.js';
import { defineModule } from '../core/module.js';
import { configControlHandlers } from './handlers.js';

/** Configuration snapshots, approvals, publish and history (docs/operations.md § Configuration snapshots and approvals). */
export const configControlModule = defineModule({
  name: 'config-control',
  open({ use }) {
    const settings = use('settings');
    const deps = { settings: settings.configControl, project: use('project'), devices: use('devices'), mutationAuditPath: settings.mutationAuditPath };
    // No start-up duty: built on the first request (core/lazy.ts).
    const configControl = lazy(async () => {
      const { ConfigControlService } = await import('./config-control-service.js');
      return new ConfigControlService(deps);
    });
    return { provides: { configControl }, handlers: configControlHandlers };
  },
});
