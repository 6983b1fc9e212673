import {
  approveConfigApproval,
  getConfigHistory,
  listConfigApprovals,
  listConfigSnapshots,
  rejectConfigApproval,
  saveConfigSnapshot,
  submitConfigApproval,
} from '../../api/domains/config-control.js';
import { handlersFor } from '../core/handlers.js';

const on = handlersFor(['configControl']);

/** Snapshots, approvals and history (docs/operations.md § Configuration snapshots and approvals); the logic is `config-control-service.ts`. */
export const configControlHandlers = [
  on(listConfigSnapshots, async (_i, ctx) => (await ctx.services.configControl.get()).listSnapshots()),
  on(saveConfigSnapshot, async ({ body }, ctx) => (await ctx.services.configControl.get()).saveSnapshot(body)),
  on(getConfigHistory, async (_i, ctx) => (await ctx.services.configControl.get()).history()),
  on(listConfigApprovals, async (_i, ctx) => (await ctx.services.configControl.get()).listApprovals()),
  on(submitConfigApproval, async ({ body }, ctx) => (await ctx.services.configControl.get()).submitApproval(body, ctx.principal)),
  on(approveConfigApproval, async ({ body, params }, ctx) => (await ctx.services.configControl.get()).approve(params['id']!, body, ctx.principal)),
  on(rejectConfigApproval, async ({ body, params }, ctx) => (await ctx.services.configControl.get()).reject(params['id']!, body, ctx.principal)),
];
