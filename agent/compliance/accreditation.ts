/**
 * The accreditation bundle of a compliance evaluation and its Markdown form (docs/operations.md
 * § Reports, "Accreditation"). Pure: the caller passes the clock. `accreditation_status` is always
 * `template_only`: these are engineering templates, not a certification.
 */
import { createHash } from 'node:crypto';
import type { Program } from '../programs/language/ast.js';
import { TEMPLATE_NOTICE, type ComplianceProfile } from './profiles.js';
import { complianceFacts, evaluateCompliance, type ComplianceEvaluation, type ComplianceRequirement } from './evaluate.js';

export interface EvidenceItem {
  id: string;
  label: string;
  status: 'ok' | 'gap';
  detail: string;
}

export interface AccreditationReport {
  profile: string;
  program: string;
  description: string;
  accreditation_status: 'template_only';
  template_notice: string;
  audit_export_id: string;
  /** RFC 3339 (UTC) by default; `unix-<epoch seconds>` with `generatedAt: 'unix'`. */
  generated_at: string;
  generated_at_ms: number;
  passed: boolean;
  evidence_checklist: EvidenceItem[];
  evaluation: ComplianceEvaluation;
}

/** First 8 bytes (16 hex) of SHA-256 over `<profile>|<label>|<passed>|<violation count>`: the same for identical results. */
export function auditExportId(profile: string, label: string, passed: boolean, violations: number): string {
  return createHash('sha256').update(`${profile}|${label}|${passed}|${violations}`).digest('hex').slice(0, 16);
}

const REQUIRED_ROWS: ReadonlyArray<{ id: string; label: string; requirement: ComplianceRequirement; applies: (p: ComplianceProfile) => boolean }> = [
  { id: 'kill_switch', label: 'Kill switch', requirement: 'requires_kill_switch', applies: (p) => p.requiresKillSwitch },
  { id: 'readiness', label: 'Readiness score', requirement: 'min_readiness_score', applies: (p) => p.minReadinessScore > 0 },
  { id: 'health_checks', label: 'Health checks', requirement: 'min_health_checks', applies: (p) => p.minHealthChecks > 0 },
  { id: 'assurance_case', label: 'Assurance case', requirement: 'requires_assurance_case', applies: (p) => p.requiresAssuranceCase },
  { id: 'secure_comm', label: 'Secure communication', requirement: 'requires_secure_comm', applies: (p) => p.requiresSecureComm },
];

export interface AccreditationOptions {
  /**
   * How `generated_at` is written: `rfc3339` (the report export, docs/operations.md § Reports) or
   * the earlier `unix-<epoch seconds>` string a compliance route may keep for its clients.
   * `generated_at_ms` is always present.
   */
  generatedAt?: 'rfc3339' | 'unix';
}

export function accreditationReport(program: Program, profile: ComplianceProfile, label: string, nowMs: number, options: AccreditationOptions = {}): AccreditationReport {
  const facts = complianceFacts(program);
  const evaluation = evaluateCompliance(program, profile, label, facts);
  const violated = new Set(evaluation.violations.map((v) => v.requirement));
  const checklist: EvidenceItem[] = [];
  for (const row of REQUIRED_ROWS) {
    if (!row.applies(profile)) continue;
    const ok = !violated.has(row.requirement);
    checklist.push({ id: row.id, label: row.label, status: ok ? 'ok' : 'gap', detail: ok ? 'requirement satisfied' : 'requirement not satisfied' });
  }
  checklist.push({
    id: 'tamper_policy',
    label: 'Tamper policy',
    status: profile.requiresTamperPolicy && facts.tamperBranches === 0 ? 'gap' : 'ok',
    detail: `${facts.tamperBranches} tamper_policy branches`,
  });
  checklist.push({
    id: 'secure_boot',
    label: 'Secure boot',
    status: profile.requiresSecureBoot && !facts.secureBoot.passed ? 'gap' : 'ok',
    detail: `${facts.secureBoot.score}/100 score, ${facts.secureBoot.entries.length} contracts`,
  });
  checklist.push({ id: 'template_notice', label: 'Template notice', status: 'ok', detail: TEMPLATE_NOTICE });
  return {
    profile: profile.name,
    program: label,
    description: profile.description,
    accreditation_status: 'template_only',
    template_notice: TEMPLATE_NOTICE,
    audit_export_id: auditExportId(profile.name, label, evaluation.passed, evaluation.violations.length),
    generated_at: options.generatedAt === 'unix' ? `unix-${Math.floor(nowMs / 1000)}` : new Date(nowMs).toISOString(),
    generated_at_ms: nowMs,
    passed: evaluation.passed,
    evidence_checklist: checklist,
    evaluation,
  };
}

export function accreditationMarkdown(report: AccreditationReport): string {
  const lines = [
    `# Compliance accreditation export — ${report.profile}`,
    `Program: \`${report.program}\``,
    report.description,
    '',
    `**Status:** ${report.accreditation_status}`,
    `**Audit export ID:** \`${report.audit_export_id}\``,
    `**Generated:** ${report.generated_at}`,
    '',
    `> ${report.template_notice}`,
    '',
    `**Evaluation:** ${report.passed ? 'PASS' : 'FAIL'}`,
    '',
    '## Evidence checklist',
    ...report.evidence_checklist.map((e) => `- [${e.status === 'ok' ? 'x' : ' '}] **${e.label}** — ${e.detail} (${e.status})`),
  ];
  if (report.evaluation.violations.length > 0) {
    lines.push('', '## Violations');
    for (const v of report.evaluation.violations) lines.push(`- [${v.severity === 'error' ? 'Error' : 'Warning'}] ${v.requirement} — ${v.message}`);
  }
  return lines.join('\n');
}
