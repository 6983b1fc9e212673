import {
  getAnalyticsCertificationPack,
  getAnalyticsGovernance,
  getAnalyticsHumanTeaming,
  getAnalyticsMissionRisk,
  getAnalyticsMissionTwin,
  getAnalyticsReadiness,
  getAnalyticsReadinessForecast,
  getAnalyticsTimeTravel,
  getAnalyticsTrustGraph,
  getAnalyticsWhatIf,
} from '../../api/domains/analytics.js';
import { handlersFor } from '../core/handlers.js';

const on = handlersFor(['analytics']);

/** Program analytics; the logic is the analytics service's (`analytics-service.ts`). */
export const analyticsHandlers = [
  on(getAnalyticsReadiness, async ({ query }, ctx) => (await ctx.services.analytics.get()).readiness(query)),
  on(getAnalyticsReadinessForecast, async ({ query }, ctx) => (await ctx.services.analytics.get()).readinessForecast(query)),
  on(getAnalyticsWhatIf, async ({ query }, ctx) => (await ctx.services.analytics.get()).whatIf(query)),
  on(getAnalyticsMissionRisk, async (_i, ctx) => (await ctx.services.analytics.get()).missionRisk()),
  on(getAnalyticsTrustGraph, async ({ query }, ctx) => (await ctx.services.analytics.get()).trustGraph(query)),
  on(getAnalyticsMissionTwin, async (_i, ctx) => (await ctx.services.analytics.get()).missionTwin()),
  on(getAnalyticsCertificationPack, async ({ query }, ctx) => (await ctx.services.analytics.get()).certificationPack(query)),
  on(getAnalyticsTimeTravel, async ({ query }, ctx) => (await ctx.services.analytics.get()).timeTravel(query)),
  on(getAnalyticsHumanTeaming, async (_i, ctx) => (await ctx.services.analytics.get()).humanTeaming()),
  on(getAnalyticsGovernance, async ({ query }, ctx) => (await ctx.services.analytics.get()).governance(query)),
];
