import { lazy } from '../core/lazy.js';
import { defineModule } from '../core/module.js';
import { deploymentHandlers } from './handlers.js';

/**
 * Deploy gate, deployment profiles and deployment verification (docs/operations.md). Nothing to do
 * at start: built on the first request, which also loads the program analyses it runs.
 */
export const deploymentModule = defineModule({
  name: 'deployment',
  open({ use }) {
    const programs = use('programs');
    const operator = use('operator');
    const deps = {
      project: use('project'),
      devices: use('devices'),
      alerts: use('alerts'),
      entities: use('entities'),
      fleetAgentCount: () => operator.fleetAgents().count,
      prepareFacts: () => programs.prepareFacts(),
    };
    const deployment = lazy(async () => new (await import('./deployment-service.js')).DeploymentService(deps));
    return { provides: { deployment }, handlers: deploymentHandlers };
  },
});
