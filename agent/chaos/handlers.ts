import { listChaosExperiments, listChaosInjections, simulateChaos, startChaosExperiment } from '../../api/domains/chaos.js';
import { API_VERSION } from '../../api/versions.js';
import { handlersFor } from '../core/handlers.js';
import { CHAOS_INJECTIONS } from './injections.js';

const on = handlersFor(['chaos']);

/** Chaos: the static experiment over the program and live experiments on devices (docs/mesh.md § Chaos). */
export const chaosHandlers = [
  on(listChaosInjections, () => ({ version: API_VERSION, injections: [...CHAOS_INJECTIONS] })),
  on(simulateChaos, async ({ body }, ctx) => ({ version: API_VERSION, ...(await (await ctx.services.chaos.get()).simulate(body.injections)) })),
  on(startChaosExperiment, async ({ body }, ctx) => ({
    version: API_VERSION,
    experiment: (await ctx.services.chaos.get()).experiments.start(body, ctx.principal?.user_id ?? ctx.principal?.key_id ?? null),
  })),
  on(listChaosExperiments, async (_i, ctx) => {
    const experiments = (await ctx.services.chaos.get()).experiments.list();
    return { version: API_VERSION, experiments, count: experiments.length };
  }),
];
