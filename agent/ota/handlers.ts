import {
  executeOta,
  getDeployTargetReadiness,
  getDeployTargetStatus,
  getOtaStatus,
  planOta,
  receiveRollout,
  rollbackRollout,
} from '../../api/domains/ota.js';
import { handlersFor } from '../core/handlers.js';

const on = handlersFor(['ota', 'otaTarget']);

/** OTA rollouts (docs/operations.md § Rollouts): the control-center side and the deploy-target side. */
export const otaHandlers = [
  on(getOtaStatus, async (_i, ctx) => (await ctx.services.ota.get()).status()),
  on(planOta, async ({ body }, ctx) => (await ctx.services.ota.get()).plan(body)),
  on(executeOta, async ({ body }, ctx) => (await ctx.services.ota.get()).execute(body)),
  on(receiveRollout, async ({ body }, ctx) => (await ctx.services.otaTarget.get()).receive(body)),
  on(rollbackRollout, async ({ body }, ctx) => (await ctx.services.otaTarget.get()).rollback(body.target)),
  on(getDeployTargetStatus, async (_i, ctx) => (await ctx.services.otaTarget.get()).status()),
  on(getDeployTargetReadiness, async ({ query }, ctx) => (await ctx.services.otaTarget.get()).readiness(query)),
];
