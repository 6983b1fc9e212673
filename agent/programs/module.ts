import { defineModule } from '../core/module.js';
import { programHandlers } from './handlers.js';
import { ProgramService } from './program-service.js';

/** Program analysis, simulation and replay; the engine itself loads on first use. */
export const programsModule = defineModule({
  name: 'programs',
  open({ use, boot }) {
    const settings = use('settings');
    const project = use('project');
    const devices = use('devices');
    const programs = new ProgramService({
      projectRoot: project.projectRoot,
      config: project.config,
      programPath: project.programPath,
      stateDir: settings.stateDir,
      decisions: settings.decisions,
      confineToRoot: true,
      // The decisions module (opened after this one) sets the escalation store.
      escalations: null,
      cwd: boot.cwd,
      devices: () => devices.list().map((d) => ({ id: d.id, logical_name: d.logical_name, type: d.device_type })),
    });
    return { provides: { programs }, handlers: programHandlers };
  },
});
