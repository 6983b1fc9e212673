import { annotateHriSession, getHriCollaboration, getHriContext, listHriSessions, replayHriSession, startHriSession } from '../../api/domains/hri.js';
import { handlersFor } from '../core/handlers.js';

const on = handlersFor(['hri']);

/** HRI sessions (docs/twins.md § HRI sessions). */
export const hriHandlers = [
  on(listHriSessions, async (_i, ctx) => (await ctx.services.hri.get()).list()),
  on(startHriSession, async ({ body }, ctx) => (await ctx.services.hri.get()).start(body)),
  on(annotateHriSession, async ({ params, body }, ctx) => (await ctx.services.hri.get()).annotate(params['id']!, body)),
  on(replayHriSession, async ({ params, query }, ctx) => (await ctx.services.hri.get()).replay(params['id']!, query)),
  on(getHriCollaboration, async (_i, ctx) => (await ctx.services.hri.get()).collaboration()),
  on(getHriContext, async (_i, ctx) => (await ctx.services.hri.get()).context()),
];
