import { defineModule } from '../core/module.js';
import { ApprovalQueue } from './approval-queue.js';
import { FleetAgentRegistry } from './fleet-agents.js';
import { operatorHandlers } from './handlers.js';
import { OperatorService } from './operator-service.js';

/** Operator controls: the mission lifecycle (through the entity overlay), approvals, quarantine, fleet agents. */
export const operatorModule = defineModule({
  name: 'operator',
  async open({ use, boot }) {
    const settings = use('settings');
    const programs = use('programs');
    const warn = (m: string) => boot.log(`warning: ${m}`);
    const queue = await ApprovalQueue.open(settings.stateDir, warn);
    const operator = await OperatorService.open(
      {
        entities: use('entities'),
        prepareFacts: () => programs.prepareFacts(),
        devicePool: use('devicePool'),
        devices: use('devices'),
        bus: use('bus'),
        queue,
        fleetAgents: new FleetAgentRegistry(settings.stateDir),
      },
      settings.stateDir,
      use('project').config,
      warn,
    );
    return { provides: { operator }, handlers: operatorHandlers, close: () => operator.flush() };
  },
});
