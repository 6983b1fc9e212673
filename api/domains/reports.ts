import * as z from 'zod';
import { defineSpec } from '../spec.js';

/**
 * Executive reporting (docs/operations.md § Reports): the weighted scorecard of the loaded program,
 * the digital thread (requirement → design → deploy → operate → retire), combined report exports
 * (compliance accreditation + scorecard + thread) as Markdown, JSON, CSV or a paginated PDF, and
 * scheduled deliveries of those exports to HTTP(S) destinations.
 */

export interface DigitalThreadQuery {
  capability?: string | undefined;
  device_id?: string | undefined;
  node_id?: string | undefined;
  lifecycle_phase?: string | undefined;
  phase_path?: string | undefined;
}

export const digitalThreadQuerySchema = z.lazy(() =>
  z.object({
    capability: z.string().max(256).optional().describe('Seed the thread with capability:<c> and the hardware and robots of its trace rows'),
    device_id: z.string().max(256).optional().describe('Seed with device:<id>, its assigned robot and related capabilities'),
    node_id: z.string().max(512).optional().describe('Seed with this graph node id (e.g. robot:rover)'),
    lifecycle_phase: z.string().max(64).optional().describe('requirement | design | deploy | operate | retire (aliases accepted)'),
    phase_path: z.string().max(256).optional().describe('Phase chain: `design->operate`, `design→operate` or `design,deploy,operate`'),
  }),
);

export interface ReportExportQuery {
  profile?: string | undefined;
  format?: string | undefined;
}

export const reportExportQuerySchema = z.lazy(() =>
  z.object({
    profile: z.string().max(128).optional().describe('Compliance profile (default defense)'),
    format: z.string().max(32).optional().describe('markdown (default; any unknown value), json, csv or pdf'),
  }),
);

export interface ReportScheduleBody {
  profile: string;
  format?: string | undefined;
  destination_url: string;
  interval_hours?: number | undefined;
  interval_seconds?: number | undefined;
}

export const reportScheduleBodySchema = z.lazy(() =>
  z.object({
    profile: z.string().max(128),
    format: z.string().max(32).optional(),
    destination_url: z.string().max(4096),
    interval_hours: z.number().int().min(1).max(24 * 366).optional(),
    /** Ours: a sub-hour interval; when present it wins over interval_hours (docs/operations.md § Reports). */
    interval_seconds: z.number().int().min(1).max(366 * 86400).optional(),
  }),
);

export const getExecutiveScorecard = defineSpec({
  id: 'getExecutiveScorecard',
  group: 'reports',
  summary: 'Weighted executive scorecard of the loaded program: seven categories, overall score, tier and recommendations',
  method: 'GET',
  path: '/v1/executive/scorecard',
  access: { kind: 'sensitive-read' },
  rpc: { name: 'GetExecutiveScorecard', request: 'Empty' },
  cli: ['executive', 'scorecard'],
});

export const queryDigitalThread = defineSpec<Record<string, never>, DigitalThreadQuery>({
  id: 'queryDigitalThread',
  group: 'reports',
  summary: 'Digital thread of the loaded program and device registry, optionally filtered by capability, device, node, lifecycle phase or phase path',
  method: 'GET',
  path: '/v1/digital-thread/query',
  access: { kind: 'sensitive-read' },
  rpc: { name: 'QueryDigitalThread', request: 'QueryRequest' },
  cli: ['digital-thread', 'query'],
  query: digitalThreadQuerySchema,
});

export const exportReports = defineSpec<Record<string, never>, ReportExportQuery>({
  id: 'exportReports',
  group: 'reports',
  summary: 'Executive report (compliance accreditation, scorecard, digital thread) as Markdown, JSON, CSV or a base64 PDF',
  method: 'GET',
  path: '/v1/reports/export',
  access: { kind: 'action', action: 'Deploy' },
  rpc: { name: 'ExportReports', request: 'QueryRequest' },
  cli: ['reports', 'export'],
  query: reportExportQuerySchema,
});

export const listReportSchedules = defineSpec({
  id: 'listReportSchedules',
  group: 'reports',
  summary: 'Scheduled report deliveries, oldest first',
  method: 'GET',
  path: '/v1/reports/schedules',
  access: { kind: 'sensitive-read' },
  cli: ['reports', 'schedules'],
});

export const createReportSchedule = defineSpec<ReportScheduleBody>({
  id: 'createReportSchedule',
  group: 'reports',
  summary: 'Schedule a report delivery to an HTTP(S) destination (ring of 100, oldest evicted)',
  method: 'POST',
  path: '/v1/reports/schedules',
  access: { kind: 'action', action: 'Deploy' },
  cli: ['reports', 'schedule'],
  body: reportScheduleBodySchema,
});

export const reportSpecs = [getExecutiveScorecard, queryDigitalThread, exportReports, listReportSchedules, createReportSchedule];
