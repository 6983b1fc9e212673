import { getHumanHealthPolicy, getHumanReadiness, getHumansReadiness, listHumans, listHumanTwins, listWearables } from '../../api/domains/people.js';
import { handlersFor } from '../core/handlers.js';

const on = handlersFor(['people']);

/** Humans, wearables, the human-health gate and human readiness (docs/people.md). */
export const peopleHandlers = [
  on(listHumans, async (_i, ctx) => (await ctx.services.people.get()).listHumans()),
  on(getHumansReadiness, async (_i, ctx) => (await ctx.services.people.get()).humansReadiness()),
  on(listHumanTwins, async (_i, ctx) => (await ctx.services.people.get()).listHumanTwins()),
  on(getHumanReadiness, async ({ params }, ctx) => (await ctx.services.people.get()).humanReadiness(params['id']!)),
  on(listWearables, async (_i, ctx) => (await ctx.services.people.get()).listWearables()),
  on(getHumanHealthPolicy, async (_i, ctx) => (await ctx.services.people.get()).healthPolicy()),
];
