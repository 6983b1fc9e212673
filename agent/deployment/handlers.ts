import { getDeployGate, getDeploymentProfile, listDeploymentProfiles, verifyDeployment } from '../../api/domains/deployment.js';
import { handlersFor } from '../core/handlers.js';

const on = handlersFor(['deployment']);

/** Deploy gate, deployment profiles and verification (docs/operations.md § Deployment gate, profiles and verification). */
export const deploymentHandlers = [
  on(getDeployGate, async (_i, ctx) => (await ctx.services.deployment.get()).gate()),
  on(listDeploymentProfiles, async ({ query }, ctx) => (await ctx.services.deployment.get()).profiles(query)),
  on(getDeploymentProfile, async ({ params }, ctx) => (await ctx.services.deployment.get()).profile(params['name']!)),
  on(verifyDeployment, async ({ body, query }, ctx) => {
    // Query parameters override the body (docs/operations.md).
    const strict = query.strict !== undefined ? query.strict === 'true' || query.strict === '1' : body.strict === true;
    const entityId = query.entity_id ?? body.entity_id;
    return (await ctx.services.deployment.get()).verify({ strict, entityId });
  }),
];
