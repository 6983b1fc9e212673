/**
 * The executive report (docs/operations.md § Reports, "Export"): compliance accreditation,
 * scorecard and digital thread, rendered as Markdown, JSON or CSV here and as PDF in
 * `report-pdf.ts`. Pure.
 */
import { accreditationMarkdown, type AccreditationReport } from '../compliance/accreditation.js';
import type { Scorecard } from './scorecard.js';
import type { DigitalThread } from './digital-thread.js';

export type ReportFormat = 'markdown' | 'json' | 'csv' | 'pdf';

/** `json`, `csv`, `pdf`; anything else (or nothing) is Markdown. */
export function reportFormat(raw: string | undefined | null): ReportFormat {
  const f = (raw ?? '').trim().toLowerCase();
  return f === 'json' || f === 'csv' || f === 'pdf' ? f : 'markdown';
}

export interface ExecutiveReport {
  program: string;
  profile: string;
  accreditation: AccreditationReport;
  scorecard: Scorecard;
  thread: DigitalThread;
}

export function reportMarkdown(r: ExecutiveReport): string {
  return [
    `# Svc executive report — ${r.program}`,
    '',
    `## Compliance (${r.profile})`,
    '',
    accreditationMarkdown(r.accreditation),
    '',
    '## Scorecard',
    '',
    `Overall: ${r.scorecard.overall_score}/100`,
    '',
    '## Digital thread',
    '',
    `Nodes: ${r.thread.matched_node_count}, edges: ${r.thread.matched_edge_count}`,
  ].join('\n');
}

/** One CSV field (RFC 4180): quoted when it holds a comma, a quote, CR or LF; quotes doubled. */
export function csvField(value: unknown): string {
  const text = value === null || value === undefined ? '' : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export const CSV_HEADER = ['section', 'key', 'value', 'detail'] as const;

/**
 * One table, `section,key,value,detail`, CRLF line ends (RFC 4180), header first. Sections in
 * order: report, accreditation, checklist, violation, scorecard, recommendation, thread.
 */
export function reportCsv(r: ExecutiveReport): string {
  const rows: unknown[][] = [[...CSV_HEADER]];
  const a = r.accreditation;
  rows.push(['report', 'program', r.program, ''], ['report', 'profile', r.profile, a.description]);
  rows.push(
    ['accreditation', 'status', a.accreditation_status, a.template_notice],
    ['accreditation', 'passed', a.passed, `audit_export_id=${a.audit_export_id}`],
    ['accreditation', 'generated_at', a.generated_at, a.generated_at_ms],
  );
  for (const e of a.evidence_checklist) rows.push(['checklist', e.id, e.status, e.detail]);
  for (const v of a.evaluation.violations) rows.push(['violation', v.requirement, v.severity, v.message]);
  for (const c of r.scorecard.categories) rows.push(['scorecard', c.name, c.score, `weight=${c.weight} weighted=${c.weighted}; ${c.detail}`]);
  rows.push(['scorecard', 'overall_score', r.scorecard.overall_score, r.scorecard.tier]);
  r.scorecard.recommendations.forEach((text, i) => rows.push(['recommendation', i + 1, text, '']));
  rows.push(['thread', 'matched_node_count', r.thread.matched_node_count, ''], ['thread', 'matched_edge_count', r.thread.matched_edge_count, '']);
  for (const [phase, count] of Object.entries(r.thread.lifecycle_summary)) rows.push(['thread', `phase:${phase}`, count, '']);
  return rows.map((row) => row.map(csvField).join(',')).join('\r\n') + '\r\n';
}
