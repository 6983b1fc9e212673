/**
 * Governance evaluation of registry entities (docs/governance.md § Compliance check and validation):
 * each governed entity's effective governance (its own attributes, gaps filled from `[governance]`)
 * checked against the governance rules, summed up into a compliance report; governance validation
 * adds the findings about the `[governance]` section itself. Pure over a registry view.
 */
import type { RegistryView } from '../entities/entity-service.js';
import { entityTypeJson } from '../entities/kinds.js';
import type { Entity } from '../entities/model.js';
import { autonomyRank, resolveProfile, RISK_LEVELS, type ProfileKindJson } from '../deployment/profiles.js';
import type { ResolvedConfig } from '../project/resolve-config.js';
import {
  entityGovernance,
  isGoverned,
  LIVE_MATURITY,
  MATURITY_STAGES,
  OPERATIONAL_CERTIFICATION,
  parseAutonomy,
  parseCertification,
  parseMaturity,
  parseRisk,
  stampedEntityIds,
  systemGovernance,
  type GovernanceAttributes,
} from './entity-governance.js';

export type Severity = 'pass' | 'warning' | 'missing' | 'action';

export interface Finding {
  severity: Severity;
  code: string;
  message: string;
  field?: string;
}

export interface EntityReport {
  entity_id: string;
  governance: Record<string, unknown>;
  passed: boolean;
  findings?: Finding[];
  recommended_actions?: string[];
}

export interface EntityFinding {
  severity: Severity;
  code: string;
  message: string;
  entity_id: string;
}

export interface ComplianceReport {
  passed: boolean;
  summary: { entities_checked: number; entities_passed: number; entities_failed: number; warnings: number; missing: number };
  entity_reports?: EntityReport[];
  warnings?: EntityFinding[];
  missing_requirements?: EntityFinding[];
  recommended_actions?: string[];
}

export interface ValidationReport {
  passed: boolean;
  deployment_profile?: string;
  operational_maturity?: string;
  findings?: Array<{ severity: Severity; code: string; message: string; entity_id?: string }>;
  recommended_actions?: string[];
}

export const DISCLAIMER = 'Governance abstractions and validation only; this is not legal or regulatory advice and not a certification.';

// ---------------------------------------------------------------------------------------------
// Enumerations emitted as JSON (a value outside the list is `{custom: text}`)

const norm = (v: string) => v.trim().toLowerCase().replace(/[-\s]/g, '_');

const STANDARDS: Record<string, string> = {
  functional_safety: 'functional_safety', func_safety: 'functional_safety',
  industrial_safety: 'industrial_safety', industrial: 'industrial_safety',
  cybersecurity: 'cybersecurity', cyber: 'cybersecurity',
  medical_device: 'medical_device', medical: 'medical_device',
  automotive: 'automotive', auto: 'automotive',
  aviation: 'aviation', aerospace: 'aviation',
  rail: 'rail', maritime: 'maritime', energy: 'energy', space: 'space',
  government: 'government', gov: 'government',
};
export const STANDARDS_KINDS = ['functional_safety', 'industrial_safety', 'cybersecurity', 'medical_device', 'automotive', 'aviation', 'rail', 'maritime', 'energy', 'space', 'government'] as const;

interface StandardsRequirements {
  required_checks: string[];
  required_evidence: string[];
  required_reports: string[];
  required_approvals: string[];
  required_documentation: string[];
}
const NO_REQUIREMENTS: StandardsRequirements = { required_checks: [], required_evidence: [], required_reports: [], required_approvals: [], required_documentation: [] };
const STANDARDS_REQUIREMENTS: Record<string, StandardsRequirements> = {
  functional_safety: { required_checks: ['hazard_analysis', 'safety_case'], required_evidence: ['fmea_report', 'test_results'], required_reports: ['safety_assessment'], required_approvals: ['safety_officer'], required_documentation: ['safety_manual'] },
  medical_device: { required_checks: ['risk_management', 'clinical_evaluation'], required_evidence: ['verification_report', 'validation_report'], required_reports: ['technical_file'], required_approvals: ['regulatory_affairs', 'clinical_lead'], required_documentation: ['instructions_for_use'] },
  automotive: { required_checks: ['hara', 'fmea', 'sotif_analysis'], required_evidence: ['test_coverage', 'field_data'], required_reports: ['safety_case'], required_approvals: ['functional_safety_manager'], required_documentation: ['safety_concept'] },
  cybersecurity: { required_checks: ['threat_model', 'vulnerability_scan'], required_evidence: ['pen_test_report', 'sbom'], required_reports: ['security_assessment'], required_approvals: ['security_officer'], required_documentation: ['security_policy'] },
};

const CONSTRAINTS: Record<string, string> = Object.fromEntries(
  [
    'connectivity', 'power', 'latency', 'temperature', 'humidity', 'hazardous_area', 'clean_room', 'gps_availability', 'indoor', 'outdoor', 'underground', 'remote',
    'limited_bandwidth', 'battery_only', 'offline', 'high_emi', 'radiation', 'waterproof', 'explosion_risk',
  ].map((c) => [c, c]),
);
Object.assign(CONSTRAINTS, { hazardous: 'hazardous_area', cleanroom: 'clean_room', gps: 'gps_availability', bandwidth: 'limited_bandwidth', battery: 'battery_only', emi: 'high_emi', atex: 'explosion_risk' });

const enumJson = (table: Record<string, string>, raw: string): string | { custom: string } => (Object.hasOwn(table, norm(raw)) ? table[norm(raw)]! : { custom: raw.trim() });

/** A standards profile with its built-in requirement lists. */
export function standardsProfile(raw: string) {
  const kind = enumJson(STANDARDS, raw);
  const text = typeof kind === 'string' ? kind : kind.custom;
  const req = typeof kind === 'string' ? (STANDARDS_REQUIREMENTS[kind] ?? NO_REQUIREMENTS) : NO_REQUIREMENTS;
  const out: Record<string, unknown> = { kind, package: `svc-standards-${text}` };
  for (const [k, v] of Object.entries(req)) if (v.length) out[k] = v;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Lists the attribute projection does not carry (comma-separated metadata or table strings)

function listOf(v: unknown): string[] {
  if (typeof v === 'string') return v.split(',').map((s) => s.trim()).filter(Boolean);
  if (Array.isArray(v)) return v.filter((s): s is string => typeof s === 'string' && s.trim() !== '').map((s) => s.trim());
  return [];
}

function entityList(e: Entity, key: 'standards_profiles' | 'constraints' | 'policies', system: Record<string, unknown> | null): string[] {
  const meta = e.metadata[`governance.${key}`];
  if (meta !== undefined) return listOf(meta);
  const own = e.governance && typeof e.governance === 'object' ? (e.governance as Record<string, unknown>)[key] : undefined;
  if (own !== undefined) return listOf(own);
  return system ? listOf(system[key]) : [];
}

/** One entity as the governance checks see it. */
export interface GovernedView {
  entity: Entity;
  /** What the entity states (stamped entities include `[governance]`): decides whether it is governed. */
  own: GovernanceAttributes;
  /** The effective governance: own attributes, gaps filled from `[governance]`. */
  effective: GovernanceAttributes;
  standards: string[];
  constraints: string[];
  policies: string[];
  certificationId: string | undefined;
}

const FILLED_KEYS = ['autonomy_level', 'deployment_profile', 'operational_maturity', 'risk_level', 'certification_status'] as const;
const ACCOUNTABILITY_KEYS = ['responsible_person', 'responsible_organization', 'mission_owner', 'deployment_owner', 'emergency_contact', 'escalation_contact'] as const;
/** Accountability fields `[governance]` fills even when the entity states its own accountability. */
const ESSENTIAL_ACCOUNTABILITY = new Set(['responsible_person', 'deployment_owner', 'emergency_contact']);

/**
 * The effective governance (docs/governance.md § Compliance check and validation): missing attributes
 * from `[governance]`; its accountability as a whole when the entity states none (no responsible
 * person and no deployment owner), else only the essential fields and the approval chain it lacks.
 */
export function withSystemGaps(own: GovernanceAttributes, system: GovernanceAttributes): GovernanceAttributes {
  const out: GovernanceAttributes = { ...own };
  for (const k of FILLED_KEYS) if (out[k] === undefined && system[k] !== undefined) out[k] = system[k];
  const hasAccountability = own.responsible_person !== undefined || own.deployment_owner !== undefined;
  for (const k of ACCOUNTABILITY_KEYS) {
    if (out[k] === undefined && system[k] !== undefined && (!hasAccountability || ESSENTIAL_ACCOUNTABILITY.has(k))) out[k] = system[k];
  }
  if (!out.approval_chain?.length && system.approval_chain?.length) out.approval_chain = system.approval_chain;
  return out;
}

export function governedViews(view: RegistryView, config: ResolvedConfig | null, entityId?: string): GovernedView[] {
  const { table, attributes: system } = systemGovernance(config);
  const stamped = stampedEntityIds(config);
  const candidates = entityId !== undefined ? [view.graph.get(entityId)].filter((e): e is Entity => e !== undefined) : view.graph.list();
  const out: GovernedView[] = [];
  for (const entity of [...candidates].sort((a, b) => a.id.localeCompare(b.id))) {
    const own = entityGovernance(entity, stamped.has(entity.id) ? system : null);
    if (!isGoverned(own)) continue;
    const systemTable = config ? table : null;
    out.push({
      entity,
      own,
      effective: withSystemGaps(own, system),
      standards: entityList(entity, 'standards_profiles', systemTable),
      constraints: entityList(entity, 'constraints', stamped.has(entity.id) ? systemTable : null),
      policies: entityList(entity, 'policies', null),
      certificationId: entity.metadata['governance.certification_id'] ?? (stamped.has(entity.id) && typeof table['certification_id'] === 'string' ? (table['certification_id'] as string) : undefined),
    });
  }
  return out;
}

/** The `EntityGovernance` JSON of a governed view (empty values omitted). */
export function governanceJson(g: GovernanceAttributes, v: Pick<GovernedView, 'standards' | 'constraints' | 'certificationId'>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (g.autonomy_level !== undefined) out['autonomy_level'] = parseAutonomy(g.autonomy_level);
  if (g.deployment_profile !== undefined) out['deployment_profile'] = resolveProfile(g.deployment_profile).kind;
  if (g.operational_maturity !== undefined) out['operational_maturity'] = parseMaturity(g.operational_maturity);
  if (g.certification_status !== undefined) {
    out['certification'] = { status: parseCertification(g.certification_status), ...(v.certificationId ? { primary_record_id: v.certificationId } : {}) };
  }
  if (g.risk_level !== undefined) out['risk_level'] = parseRisk(g.risk_level);
  if (g.responsible_person || g.deployment_owner) {
    const acc: Record<string, unknown> = {};
    for (const k of ['responsible_person', 'responsible_organization', 'mission_owner', 'deployment_owner'] as const) if (g[k]) acc[k] = g[k];
    if (g.approval_chain?.length) acc['approval_chain'] = g.approval_chain.map((role) => ({ role, required: true }));
    if (g.emergency_contact) acc['emergency_contact'] = { email: g.emergency_contact };
    if (g.escalation_contact) acc['escalation_contact'] = { email: g.escalation_contact };
    out['accountability'] = acc;
  }
  if (v.standards.length) out['standards_profiles'] = v.standards.map(standardsProfile);
  if (v.constraints.length) out['operational_constraints'] = v.constraints.map((c) => enumJson(CONSTRAINTS, c));
  return out;
}

// ---------------------------------------------------------------------------------------------
// Entity evaluation (rule order of docs/governance.md)

const MOBILE_KINDS = new Set(['robot', 'drone', 'vehicle']);
const TRUSTED = new Set(['trusted', 'verified']);
const blocking = (s: Severity) => s === 'missing' || s === 'action';

export function evaluateEntity(v: GovernedView, view: RegistryView, strict: boolean): EntityReport {
  const g = v.effective;
  const id = v.entity.id;
  const status = view.status.status(id);
  const findings: Finding[] = [];
  const actions: string[] = [];
  const add = (severity: Severity, code: string, message: string, field: string, action?: string) => {
    findings.push({ severity, code, message, field });
    if (action) actions.push(action);
  };
  const autonomy = g.autonomy_level !== undefined ? parseAutonomy(g.autonomy_level) : null;
  const risk = g.risk_level !== undefined ? parseRisk(g.risk_level) : null;
  const maturity = g.operational_maturity !== undefined ? parseMaturity(g.operational_maturity) : null;
  const live = maturity !== null && LIVE_MATURITY.has(maturity);
  if (autonomy !== null && autonomyRank(autonomy) < 4 && !g.responsible_person) {
    add('missing', 'GOV_HUMAN_APPROVAL', `Autonomy '${autonomy}' requires human approval but no responsible person is assigned`, 'accountability.responsible_person', 'Assign a responsible person for human approval');
  }
  if (autonomy !== null && autonomyRank(autonomy) >= 3 && !TRUSTED.has(status.trust_status)) {
    add('warning', 'GOV_TRUST_AUTONOMY', `Autonomy '${autonomy}' expects a trusted or verified entity (trust status: ${status.trust_status})`, 'trust_status');
  }
  if (risk !== null && RISK_LEVELS.indexOf(risk) >= RISK_LEVELS.indexOf('high') && !g.approval_chain?.length) {
    add('missing', 'GOV_APPROVAL_CHAIN', `Risk level '${risk}' requires an approval chain`, 'accountability.approval_chain', 'Define an approval chain for high-risk operations');
  }
  if (risk !== null && RISK_LEVELS.indexOf(risk) >= RISK_LEVELS.indexOf('medium') && maturity !== null && MATURITY_STAGES.indexOf(maturity) < MATURITY_STAGES.indexOf('simulation')) {
    add('warning', 'GOV_SIMULATION_MATURITY', `Risk level '${risk}' expects at least simulation maturity (current: ${maturity})`, 'operational_maturity');
  }
  if (live) {
    const cert = g.certification_status !== undefined ? parseCertification(g.certification_status) : null;
    if (cert === null || !OPERATIONAL_CERTIFICATION.has(cert)) {
      add('missing', 'GOV_CERT_LIVE', `Live maturity '${maturity}' requires validated or certified status (current: ${cert ?? 'none'})`, 'certification.status', 'Complete certification before live deployment');
    }
    if ((g.responsible_person || g.deployment_owner) && !(g.responsible_person && g.deployment_owner && g.emergency_contact)) {
      add('missing', 'GOV_ACCOUNTABILITY', 'Live deployment requires a responsible person, a deployment owner and an emergency contact', 'accountability');
    }
  }
  if (g.deployment_profile !== undefined) {
    const profile = resolveProfile(g.deployment_profile);
    const name = typeof profile.kind === 'string' ? profile.kind : profile.kind.custom;
    if (MOBILE_KINDS.has(v.entity.kind)) {
      for (const cap of profile.required_capabilities) {
        if (!v.entity.capabilities.includes(cap)) add('missing', 'GOV_CAPABILITY', `Deployment profile '${name}' requires capability '${cap}'`, 'capabilities');
      }
    }
    const max = profile.decision_authority.max_autonomy_level;
    if (autonomy !== null && autonomyRank(autonomy) > autonomyRank(max)) {
      add('warning', 'GOV_AUTONOMY_PROFILE', `Autonomy '${autonomy}' exceeds the '${name}' profile maximum '${max}'`, 'autonomy_level');
    }
  }
  if (status.readiness_status === 'not_ready' && live) add('warning', 'GOV_READINESS', `Entity is not ready while at live maturity '${maturity}'`, 'readiness_status');
  if (status.health_status === 'critical') add('action', 'GOV_HEALTH_CRITICAL', 'Entity health is critical', 'health_status', 'Resolve critical health before governed operations');
  const passed = !findings.some((f) => blocking(f.severity)) && (!strict || !findings.some((f) => f.severity === 'warning'));
  const report: EntityReport = { entity_id: id, governance: governanceJson(g, v), passed };
  if (findings.length) report.findings = findings;
  if (actions.length) report.recommended_actions = [...new Set(actions)];
  return report;
}

export function complianceCheck(view: RegistryView, config: ResolvedConfig | null, options: { strict: boolean; entityId?: string | undefined }): ComplianceReport {
  const reports = governedViews(view, config, options.entityId).map((v) => evaluateEntity(v, view, options.strict));
  const warnings: EntityFinding[] = [];
  const missing: EntityFinding[] = [];
  const actions = new Set<string>();
  for (const r of reports) {
    for (const f of r.findings ?? []) {
      const row = { severity: f.severity, code: f.code, message: f.message, entity_id: r.entity_id };
      if (f.severity === 'warning') warnings.push(row);
      else if (blocking(f.severity)) missing.push(row);
    }
    for (const a of r.recommended_actions ?? []) actions.add(a);
  }
  const failed = reports.filter((r) => !r.passed).length;
  // Outside strict mode warnings do not fail the check; a failing entity always does.
  const passed = failed === 0 && (!options.strict || warnings.length === 0);
  const report: ComplianceReport = {
    passed,
    summary: { entities_checked: reports.length, entities_passed: reports.length - failed, entities_failed: failed, warnings: warnings.length, missing: missing.length },
  };
  if (reports.length) report.entity_reports = reports;
  if (warnings.length) report.warnings = warnings;
  if (missing.length) report.missing_requirements = missing;
  if (actions.size) report.recommended_actions = [...actions].sort();
  return report;
}

export function validateGovernance(view: RegistryView, config: ResolvedConfig, options: { strict: boolean; entityId?: string | undefined }): { validation: ValidationReport; compliance: ComplianceReport } {
  const system = systemGovernance(config).attributes;
  const findings: NonNullable<ValidationReport['findings']> = [];
  const actions: string[] = [];
  // Every profile name resolves (unknown names to a custom profile without requirements), so there is
  // no unknown-profile finding (docs/governance.md).
  if (system.deployment_profile === undefined) {
    findings.push({ severity: 'warning', code: 'GOV_NO_PROFILE', message: 'No deployment profile configured in [governance]' });
  }
  const maturity = system.operational_maturity !== undefined ? parseMaturity(system.operational_maturity) : null;
  if (maturity === null) findings.push({ severity: 'warning', code: 'GOV_NO_MATURITY', message: 'No operational maturity configured in [governance]' });
  if (maturity !== null && LIVE_MATURITY.has(maturity) && !(system.responsible_person && system.deployment_owner && system.emergency_contact)) {
    findings.push({ severity: 'missing', code: 'GOV_ACCOUNTABILITY_SYSTEM', message: `Live maturity '${maturity}' requires a responsible person, a deployment owner and an emergency contact in [governance]` });
    actions.push('Complete responsible_person, deployment_owner and emergency_contact in svc.governance.toml');
  }
  const compliance = complianceCheck(view, config, options);
  for (const w of compliance.warnings ?? []) findings.push(w);
  for (const m of compliance.missing_requirements ?? []) findings.push(m);
  for (const a of compliance.recommended_actions ?? []) actions.push(a);
  const validation: ValidationReport = { passed: !findings.some((f) => blocking(f.severity)) && compliance.passed };
  if (system.deployment_profile !== undefined) {
    const kind: ProfileKindJson = resolveProfile(system.deployment_profile).kind;
    validation.deployment_profile = typeof kind === 'string' ? kind : kind.custom;
  }
  if (maturity !== null) validation.operational_maturity = maturity;
  if (findings.length) validation.findings = findings;
  const unique = [...new Set(actions)];
  if (unique.length) validation.recommended_actions = unique;
  return { validation, compliance };
}

// ---------------------------------------------------------------------------------------------
// Text forms (for people; clients read the JSON)

const LABEL: Record<Severity, string> = { pass: 'Pass', warning: 'Warning', missing: 'Missing', action: 'Action' };

export function complianceText(r: ComplianceReport): string {
  const title = 'Governance Compliance Report';
  const s = r.summary;
  const lines = [title, '='.repeat(title.length), `Result: ${r.passed ? 'PASS' : 'FAIL'}`, `Entities: ${s.entities_checked} checked, ${s.entities_passed} passed, ${s.entities_failed} failed`, `Warnings: ${s.warnings}, Missing: ${s.missing}`];
  const section = (name: string, rows: EntityFinding[] | undefined) => {
    if (!rows?.length) return;
    lines.push('', `${name}:`);
    for (const f of rows) lines.push(`  [${f.code}] ${f.entity_id} — ${f.message}`);
  };
  section('Missing requirements', r.missing_requirements);
  section('Warnings', r.warnings);
  if (r.recommended_actions?.length) lines.push('', 'Recommended actions:', ...r.recommended_actions.map((a) => `  - ${a}`));
  return lines.join('\n');
}

export function validationText(r: ValidationReport): string {
  const title = 'Governance Validation Report';
  const lines = [title, '='.repeat(title.length), `Result: ${r.passed ? 'PASS' : 'FAIL'}`];
  if (r.deployment_profile) lines.push(`Deployment Profile: ${r.deployment_profile}`);
  if (r.operational_maturity) lines.push(`Operational Maturity: ${r.operational_maturity}`);
  if (r.findings?.length) {
    lines.push('', 'Findings:');
    for (const f of r.findings) lines.push(`  [${LABEL[f.severity]}] ${f.code} — ${f.message}${f.entity_id ? ` (${f.entity_id})` : ''}`);
  }
  if (r.recommended_actions?.length) lines.push('', 'Recommended actions:', ...r.recommended_actions.map((a) => `  - ${a}`));
  return lines.join('\n');
}

export const entityTypeOf = (e: Entity) => entityTypeJson(e.kind, e.custom);
