import { detectDrift, listDriftScans, runDriftScan } from '../../api/domains/config-control.js';
import { handlersFor } from '../core/handlers.js';

const on = handlersFor(['drift']);

/** Drift reports and scans (docs/operations.md § Drift); the logic is `drift-service.ts`. */
export const driftHandlers = [
  on(detectDrift, async ({ query }, ctx) => (await ctx.services.drift.get()).detect(query.baseline_id)),
  on(listDriftScans, async (_i, ctx) => (await ctx.services.drift.get()).scans()),
  on(runDriftScan, async ({ body }, ctx) => (await ctx.services.drift.get()).scan({ baselineId: body.baseline_id, source: 'api' })),
];
