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
  on(listRecoveryPlans, (_i, ctx) => ctx.services.recovery.listPlans()),
  on(getRecoveryHistory, (_i, ctx) => ctx.services.recovery.history()),
  on(getRecoveryMetrics, (_i, ctx) => ctx.services.recovery.metrics()),
  on(listRecoveryPlaybooks, (_i, ctx) => ctx.services.recovery.playbooks()),
  on(listRecoveryPolicies, (_i, ctx) => ctx.services.recovery.policiesView()),
  on(getRecoveryGraph, ({ query }, ctx) => ctx.services.recovery.graph(query.entity_id)),
  on(getRecoveryPredictiveGet, (_i, ctx) => ctx.services.recovery.predictive(undefined)),
  on(getRecoveryPredictive, ({ body }, ctx) => ctx.services.recovery.predictive(body.telemetry)),
  on(listRecoverableEntities, (_i, ctx) => ctx.services.recovery.recoverableEntities()),
  on(planRecovery, ({ body }, ctx) => ctx.services.recovery.evaluate(body, 'plan')),
  on(simulateRecovery, ({ body }, ctx) => ctx.services.recovery.evaluate(body, 'simulate')),
  on(validateRecovery, async ({ body }, ctx) => {
    const r = await ctx.services.recovery.evaluate(body, 'dry_run');
    return { ...r, validation: r.report.evidence };
  }),
  on(explainRecovery, ({ body }, ctx) => ctx.services.recovery.explain(body)),
  on(recommendRecovery, ({ body }, ctx) => ctx.services.recovery.recommend(body)),
  on(executeRecovery, ({ body }, ctx) => ctx.services.recovery.execute(body)),
];
