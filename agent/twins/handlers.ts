import { getTwin, getTwinHistory, getTwinUsage, importTwinReplay, listTwins, pushTwinSnapshot, syncTwin } from '../../api/domains/twins.js';
import { handlersFor } from '../core/handlers.js';

const on = handlersFor(['twins']);

/** Mission twins (docs/twins.md). */
export const twinHandlers = [
  on(listTwins, async (_i, ctx) => (await ctx.services.twins.get()).list()),
  on(getTwinUsage, async (_i, ctx) => (await ctx.services.twins.get()).usage()),
  on(getTwin, async ({ params }, ctx) => (await ctx.services.twins.get()).get(params['id']!)),
  on(getTwinHistory, async ({ params }, ctx) => (await ctx.services.twins.get()).history(params['id']!)),
  on(syncTwin, async ({ query }, ctx) => (await ctx.services.twins.get()).sync(query)),
  on(importTwinReplay, async ({ body }, ctx) => (await ctx.services.twins.get()).importReplay(body)),
  on(pushTwinSnapshot, async ({ params, body }, ctx) => (await ctx.services.twins.get()).push(params['id']!, body)),
];
