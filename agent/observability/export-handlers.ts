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
  on(getObservabilityBackend, (_i, ctx) => ctx.services.otlp.backend()),
  on(getObservabilityTraces, (_i, ctx) => ctx.services.otlp.listTraces()),
  on(getOtlpTraces, (_i, ctx) => ctx.services.otlp.otlpTraces()),
  on(getOtlpMetrics, (_i, ctx) => ctx.services.otlp.otlpMetrics()),
  on(exportOtlpTraces, ({ query }, ctx) => ctx.services.otlp.exportTraces(query.endpoint)),
  on(exportOtlpMetrics, ({ query }, ctx) => ctx.services.otlp.exportMetrics(query.endpoint)),
];
