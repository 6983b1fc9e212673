/**
 * Executive reporting (docs/operations.md § Reports): scorecard, digital thread, report exports and
 * scheduled deliveries. Loaded lazily (agent/core/lazy.ts): the program analyses and pdfkit stay
 * off the agent's start and idle memory until a report is asked for.
 */
import path from 'node:path';
import { API_VERSION } from '../../api/versions.js';
import type { ReportScheduleBody } from '../../api/domains/reports.js';
import { ApiError, badRequest } from '../core/errors.js';
import { servedProgram, type ServedProgram } from '../programs/program-files.js';
import { RECOVERY_KNOWLEDGE_FILE } from '../programs/program-engine.js';
import type { ProjectContext } from '../project/project-context.js';
import type { DeviceRegistry } from '../devices/device-registry.js';
import type { OutboundHttp } from '../outbound/outbound-http.js';
import type { JsonStore } from '../state/json-store.js';
import { DEFAULT_COMPLIANCE_PROFILE, accreditationReport, findComplianceProfile } from '../compliance/index.js';
import { executiveScorecard, type Scorecard } from './scorecard.js';
import { digitalThread, type DigitalThread, type ThreadInputs } from './digital-thread.js';
import { reportCsv, reportFormat, reportMarkdown, type ExecutiveReport } from './report-export.js';
import { MAX_SCHEDULES, scheduleIntervalMs, type ReportSchedule, type SchedulesFile } from './schedule-store.js';

export { NO_PROGRAM_MESSAGE } from '../programs/program-files.js';
export const DELIVERY_TYPE = 'svc.report.delivery';

export interface ReportsDeps {
  project: ProjectContext;
  devices: DeviceRegistry;
  outbound: OutboundHttp;
  stateDir: string;
  store: JsonStore<SchedulesFile>;
  log: (line: string) => void;
  now?: () => number;
}

type LoadedProgram = ServedProgram;

export class ReportsService {
  private readonly now: () => number;

  constructor(private readonly deps: ReportsDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** The server's `--program`, parsed now (nothing is cached across requests but the parse of an unchanged file). */
  private program(): LoadedProgram {
    return servedProgram(this.deps.project);
  }


  private scorecardOf(p: LoadedProgram): Scorecard {
    const project = this.deps.project;
    return executiveScorecard({
      program: p.program,
      label: p.label,
      file: p.file,
      config: project.config,
      projectRoot: project.projectRoot,
      stateDir: this.deps.stateDir,
      knowledgePath: path.join(this.deps.stateDir, RECOVERY_KNOWLEDGE_FILE),
    });
  }

  private threadOf(p: LoadedProgram, query: ThreadInputs['query']): DigitalThread {
    const devices = this.deps.devices.list().map((d) => ({
      id: d.id,
      device_type: d.device_type,
      assigned_robot: d.assigned_robot ?? d.robot_id ?? null,
      lifecycle_state: d.lifecycle_state,
    }));
    return digitalThread({ program: p.program, label: p.label, config: this.deps.project.config, devices, query });
  }

  scorecard() {
    return { version: API_VERSION, scorecard: this.scorecardOf(this.program()) };
  }

  digitalThread(query: ThreadInputs['query']) {
    return { version: API_VERSION, digital_thread: this.threadOf(this.program(), query) };
  }

  /** `GET /v1/reports/export`: the same body whether a caller or the scheduler asks. */
  async export(query: { profile?: string | undefined; format?: string | undefined }) {
    const p = this.program();
    const requested = query.profile ?? DEFAULT_COMPLIANCE_PROFILE;
    const profile = findComplianceProfile(requested);
    if (!profile) throw badRequest(`Unknown compliance profile '${requested}'`);
    const report: ExecutiveReport = {
      program: p.label,
      profile: profile.name,
      accreditation: accreditationReport(p.program, profile, p.label, this.now()),
      scorecard: this.scorecardOf(p),
      thread: this.threadOf(p, {}),
    };
    const head = { version: API_VERSION, program: p.label, profile: profile.name };
    switch (reportFormat(query.format)) {
      case 'json':
        return { ...head, accreditation: report.accreditation, scorecard: report.scorecard, digital_thread_summary: report.thread.chain_summary };
      case 'csv':
        return { ...head, format: 'csv', mime: 'text/csv', body: reportCsv(report) };
      case 'pdf': {
        const { reportPdf } = await import('./report-pdf.js');
        return { ...head, format: 'pdf', mime: 'application/pdf', body_base64: (await reportPdf(report)).toString('base64') };
      }
      default:
        return { ...head, format: 'markdown', body: reportMarkdown(report) };
    }
  }

  listSchedules() {
    return { version: API_VERSION, schedules: this.deps.store.data.schedules.map((s) => ({ ...s })) };
  }

  createSchedule(body: ReportScheduleBody) {
    if (body.destination_url.trim() === '') throw badRequest('destination_url required');
    const store = this.deps.store;
    const schedule = store.change((data) => {
      let ms = this.now();
      while (data.schedules.some((s) => s.id === `report-schedule-${ms}`)) ms++;
      const record: ReportSchedule = {
        id: `report-schedule-${ms}`,
        profile: body.profile,
        format: body.format ?? 'markdown',
        destination_url: body.destination_url.trim(),
        interval_hours: body.interval_hours ?? 24,
        ...(body.interval_seconds !== undefined ? { interval_seconds: body.interval_seconds } : {}),
        enabled: true,
        created_at_ms: this.now(),
        last_run_ms: null,
        last_status: null,
      };
      data.schedules.push(record);
      if (data.schedules.length > MAX_SCHEDULES) data.schedules.splice(0, data.schedules.length - MAX_SCHEDULES);
      data.max_entries = MAX_SCHEDULES;
      return record;
    });
    return { version: API_VERSION, ok: true, schedule: { ...schedule } };
  }

  /**
   * One scheduler tick: every enabled schedule that never ran or whose interval has passed is
   * exported and delivered. Exports and HTTP calls run on a snapshot with nothing held; the
   * results are applied to the store afterwards, by id (a schedule evicted meanwhile is skipped).
   */
  async deliverDue(tickMs = this.now()): Promise<Array<{ id: string; status: string }>> {
    const due = this.deps.store.data.schedules
      .filter((s) => s.enabled && (s.last_run_ms === null || tickMs - s.last_run_ms >= scheduleIntervalMs(s)))
      .map((s) => ({ ...s }));
    const results: Array<{ id: string; status: string }> = [];
    for (const s of due) results.push({ id: s.id, status: await this.deliver(s) });
    if (results.length === 0) return results;
    this.deps.store.change((data) => {
      for (const r of results) {
        const s = data.schedules.find((x) => x.id === r.id);
        if (!s) continue;
        s.last_run_ms = tickMs;
        s.last_status = r.status;
      }
    });
    await this.deps.store.commit();
    return results;
  }

  private async deliver(s: ReportSchedule): Promise<string> {
    let exported: unknown;
    try {
      exported = await this.export({ profile: s.profile, format: s.format });
    } catch (err) {
      const status = err instanceof ApiError ? err.status : 500;
      this.deps.log(`report schedule ${s.id}: export failed (${status}): ${(err as Error).message}`);
      return `export_failed:${status}`;
    }
    try {
      const res = await this.deps.outbound.postJson(s.destination_url, { type: DELIVERY_TYPE, body: JSON.stringify(exported) });
      if (res.ok) return 'delivered';
      this.deps.log(`report schedule ${s.id}: ${s.destination_url} answered HTTP ${res.status}`);
    } catch (err) {
      this.deps.log(`report schedule ${s.id}: delivery to ${s.destination_url} failed: ${(err as Error).message}`);
    }
    return 'delivery_failed';
  }

  async close(): Promise<void> {
    await this.deps.store.close();
  }
}
