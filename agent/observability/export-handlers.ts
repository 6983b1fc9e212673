import {
  exportOtlpMetrics,
  exportOtlpTraces,
  getObservabilityBackend,
  getObservabilityTraces,
  getOtlpMetrics,
  getOtlpTraces,
} from '../../api/domains/observability.js';
import { handlersFor } from '../core/handlers.js';

const on = handlersFor(['otlp']);

/** Request traces and their OTLP export (docs/observability.md § Traces, § OTLP). */
export const observabilityExportHandlers = [
  // The reference's backend document carries no `version` key; clients read it as is.
  on(getObservabilityBackend, async (_i, ctx) => (await ctx.services.otlp.get()).backend()),
  on(getObservabilityTraces, async (_i, ctx) => (await ctx.services.otlp.get()).listTraces()),
  on(getOtlpTraces, async (_i, ctx) => (await ctx.services.otlp.get()).otlpTraces()),
  on(getOtlpMetrics, async (_i, ctx) => (await ctx.services.otlp.get()).otlpMetrics()),
  on(exportOtlpTraces, async ({ query }, ctx) => (await ctx.services.otlp.get()).exportTraces(query.endpoint)),
  on(exportOtlpMetrics, async ({ query }, ctx) => (await ctx.services.otlp.get()).exportMetrics(query.endpoint)),
];
