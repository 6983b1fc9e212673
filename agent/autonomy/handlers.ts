import {
  getAutonomyAttention,
  getAutonomyFusion,
  getAutonomyHomeostasis,
  getAutonomyImmunity,
  getAutonomyMemory,
  listAutonomyReflexes,
  listAutonomyReflexTraces,
  listMaintenanceWindows,
  putMaintenanceWindow,
} from '../../api/domains/autonomy.js';
import { API_VERSION } from '../../api/versions.js';
import { handlersFor } from '../core/handlers.js';

const on = handlersFor(['autonomy', 'programs']);

/** Resilient autonomy views over the autonomy service (docs/autonomy.md); the program's facts are loaded first where a view reads them. */
export const autonomyHandlers = [
  on(listAutonomyReflexes, async (_i, ctx) => {
    await ctx.services.programs.prepareFacts();
    return { version: API_VERSION, ...ctx.services.autonomy.reflexList() };
  }),
  on(listAutonomyReflexTraces, async (_i, ctx) => {
    await ctx.services.programs.prepareFacts();
    return { version: API_VERSION, ...ctx.services.autonomy.reflexTraces() };
  }),
  on(getAutonomyHomeostasis, async (_i, ctx) => {
    await ctx.services.programs.prepareFacts();
    return { version: API_VERSION, ...ctx.services.autonomy.homeostasis() };
  }),
  on(getAutonomyImmunity, async (_i, ctx) => {
    await ctx.services.programs.prepareFacts();
    return { version: API_VERSION, ...ctx.services.autonomy.immunity() };
  }),
  on(getAutonomyAttention, async (_i, ctx) => {
    await ctx.services.programs.prepareFacts();
    return { version: API_VERSION, ...ctx.services.autonomy.attention() };
  }),
  on(getAutonomyFusion, (_i, ctx) => ({ version: API_VERSION, ...ctx.services.autonomy.fusion() })),
  on(getAutonomyMemory, async (_i, ctx) => {
    await ctx.services.programs.prepareFacts();
    return { version: API_VERSION, ...ctx.services.autonomy.memory() };
  }),
  on(listMaintenanceWindows, (_i, ctx) => ({ version: API_VERSION, ...ctx.services.autonomy.listWindows() })),
  on(putMaintenanceWindow, ({ body }, ctx) => ({ version: API_VERSION, ...ctx.services.autonomy.putWindow(body) })),
];
