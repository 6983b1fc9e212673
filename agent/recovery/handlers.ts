import {
  executeRecovery,
  explainRecovery,
  getRecoveryGraph,
  getRecoveryHistory,
  getRecoveryMetrics,
  getRecoveryPredictive,
  getRecoveryPredictiveGet,
  listRecoverableEntities,
  listRecoveryPlans,
  listRecoveryPlaybooks,
  listRecoveryPolicies,
  planRecovery,
  recommendRecovery,
  simulateRecovery,
  validateRecovery,
} from '../../api/domains/recovery.js';
import { handlersFor } from '../core/handlers.js';

const on = handlersFor(['recovery']);

/** The recovery orchestrator's operations; the logic is the recovery service's (`recovery-service.ts`). */
export const recoveryHandlers = [
  on(listRecoveryPlans, async (_i, ctx) => (await ctx.services.recovery.get()).listPlans()),
  on(getRecoveryHistory, async (_i, ctx) => (await ctx.services.recovery.get()).history()),
  on(getRecoveryMetrics, async (_i, ctx) => (await ctx.services.recovery.get()).metrics()),
  on(listRecoveryPlaybooks, async (_i, ctx) => (await ctx.services.recovery.get()).playbooks()),
  on(listRecoveryPolicies, async (_i, ctx) => (await ctx.services.recovery.get()).policiesView()),
  on(getRecoveryGraph, async ({ query }, ctx) => (await ctx.services.recovery.get()).graph(query.entity_id)),
  on(getRecoveryPredictiveGet, async (_i, ctx) => (await ctx.services.recovery.get()).predictive(undefined)),
  on(getRecoveryPredictive, async ({ body }, ctx) => (await ctx.services.recovery.get()).predictive(body.telemetry)),
  on(listRecoverableEntities, async (_i, ctx) => (await ctx.services.recovery.get()).recoverableEntities()),
  on(planRecovery, async ({ body }, ctx) => (await ctx.services.recovery.get()).evaluate(body, 'plan')),
  on(simulateRecovery, async ({ body }, ctx) => (await ctx.services.recovery.get()).evaluate(body, 'simulate')),
  on(validateRecovery, async ({ body }, ctx) => {
    const r = await (await ctx.services.recovery.get()).evaluate(body, 'dry_run');
    return { ...r, validation: r.report.evidence };
  }),
  on(explainRecovery, async ({ body }, ctx) => (await ctx.services.recovery.get()).explain(body)),
  on(recommendRecovery, async ({ body }, ctx) => (await ctx.services.recovery.get()).recommend(body)),
  on(executeRecovery, async ({ body }, ctx) => (await ctx.services.recovery.get()).execute(body)),
];
