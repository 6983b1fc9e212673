import { lazy } from '../core/lazy.js';
import { defineModule } from '../core/module.js';
import { otaHandlers } from './handlers.js';
import { installedProgram, switchServedProgram } from './served-program.js';

/**
 * OTA rollouts (docs/operations.md § Rollouts). Both services load on first use (core/lazy.ts). At
 * start the only duty is to keep serving the program a received rollout installed: a plain file read.
 */
export const otaModule = defineModule({
  name: 'ota',
  open({ use, boot }) {
    const settings = use('settings');
    const project = use('project');
    const programs = use('programs');
    const startProgram = project.programPath;
    const installed = installedProgram(settings.stateDir);
    if (installed) switchServedProgram(project, programs, installed);
    const warn = (m: string) => boot.log(`warning: ${m}`);
    const common = {
      devices: use('devices'),
      devicePool: use('devicePool'),
      deviceHub: use('deviceHub'),
      alerts: use('alerts'),
    };
    const bus = use('bus');
    const outbound = use('outbound');
    const ota = lazy(async () => {
      const [{ OtaService }, { openDeployState, openRolloutStore }] = await Promise.all([import('./ota-service.js'), import('./ota-store.js')]);
      const [deployState, rolloutStore] = await Promise.all([openDeployState(settings.stateDir, warn), openRolloutStore(settings.stateDir, warn)]);
      return { service: new OtaService({ ...common, settings, bus, outbound, deployState, rolloutStore, programPath: () => programs.workspace.programPath }), stores: [deployState, rolloutStore] };
    });
    const otaTarget = lazy(async () => {
      const { TargetService } = await import('./target-service.js');
      return TargetService.open({ ...common, settings, project, programs }, startProgram, warn);
    });
    return {
      provides: { ota: { get: async () => (await ota.get()).service, loaded: () => ota.loaded()?.service ?? null }, otaTarget },
      handlers: otaHandlers,
      close: async () => {
        await Promise.all((ota.loaded()?.stores ?? []).map((s) => s.close()));
        await otaTarget.loaded()?.close();
      },
    };
  },
});
