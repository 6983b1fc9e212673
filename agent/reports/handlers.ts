import { createReportSchedule, exportReports, getExecutiveScorecard, listReportSchedules, queryDigitalThread } from '../../api/domains/reports.js';
import { handlersFor } from '../core/handlers.js';

const on = handlersFor(['reports']);

/** Executive reporting; the logic is the reports service's (`reports-service.ts`). */
export const reportHandlers = [
  on(getExecutiveScorecard, async (_i, ctx) => (await ctx.services.reports.get()).scorecard()),
  on(queryDigitalThread, async ({ query }, ctx) => (await ctx.services.reports.get()).digitalThread(query)),
  on(exportReports, async ({ query }, ctx) => (await ctx.services.reports.get()).export(query)),
  on(listReportSchedules, async (_i, ctx) => (await ctx.services.reports.get()).listSchedules()),
  on(createReportSchedule, async ({ body }, ctx) => (await ctx.services.reports.get()).createSchedule(body)),
];
