import { getHealthSummary, getSreSummary } from '../../api/domains/sre.js';
import { handlersFor } from '../core/handlers.js';

const on = handlersFor(['sre']);

/** Fleet health and the SRE rollup (docs/observability.md § Fleet health, § SRE summary). */
export const sreHandlers = [
  on(getHealthSummary, (_i, ctx) => ctx.services.sre.healthSummary()),
  on(getSreSummary, (_i, ctx) => ctx.services.sre.sreSummary()),
];
