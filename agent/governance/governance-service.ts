/**
 * Operational governance and compliance (docs/governance.md). Reads are computed per request from
 * the loaded configuration and the entity registry; policy assignments, certification records and
 * the compliance evidence log are persisted in the state directory. Loaded on the first request.
 */
import path from 'node:path';
import { API_VERSION } from '../../api/versions.js';
import type { AccountabilityBody, PolicyAssignBody } from '../../api/domains/governance.js';
import { ApiError, badRequest, notFound } from '../core/errors.js';
import { accreditationMarkdown, accreditationReport, complianceProfileNames, DEFAULT_COMPLIANCE_PROFILE, findComplianceProfile } from '../compliance/index.js';
import { loadCatalog } from '../compliance/catalog.js';
import { allProfiles, AUTONOMY_LEVELS, resolveProfile } from '../deployment/profiles.js';
import type { EntityDeclaration } from '../entities/declaration.js';
import type { EntityService } from '../entities/entity-service.js';
import { entityTypeJson } from '../entities/kinds.js';
import type { ProjectContext } from '../project/project-context.js';
import { NO_PROGRAM_MESSAGE, servedProgram } from '../programs/program-files.js';
import type { GovernanceSettings } from '../settings/settings.js';
import { JsonlLog, readJsonl } from '../state/jsonl-log.js';
import {
  complianceCheck,
  complianceText,
  DISCLAIMER,
  entityTypeOf,
  governedViews,
  STANDARDS_KINDS,
  standardsProfile,
  validateGovernance,
  validationText,
} from './compliance-check.js';
import { entityGovernance, isGoverned, parseAutonomy, parseCertification, parseMaturity, parseRisk, type GovernanceAttributes } from './entity-governance.js';
import type { CertificationRecord, GovernanceStores, PolicyAssignment, PolicyAuditEntry } from './governance-store.js';
import { loadSigningKey, publicPem, signEd25519, verifyEd25519, type SigningKey } from './signing.js';

export { NO_PROGRAM_MESSAGE };
export const NO_CONFIG_MESSAGE = 'No configuration loaded';
export const EVIDENCE_FILE = 'evidence-append.jsonl';

const CAPABILITIES = ['standards_awareness', 'compliance_validation', 'deployment_governance', 'operational_policies', 'certification_tracking', 'risk_assessment', 'audit_support', 'human_accountability'];
const POLICY_KINDS = new Set(['safety', 'security', 'recovery', 'trust', 'maintenance', 'update', 'decision', 'mission', 'deployment', 'compliance']);

export interface GovernanceDeps {
  project: ProjectContext;
  entities: EntityService;
  prepareFacts: () => Promise<void>;
  stores: GovernanceStores;
  stateDir: string;
  settings: GovernanceSettings;
  now?: () => number;
}

export interface EvidenceRecord {
  exported_at_ms: number;
  exported_at: string;
  profile: string;
  audit_export_id: string;
  program: string;
  passed: boolean;
  actor?: string;
}

const text = (v: string | undefined) => v ?? null;
const profileText = (raw: string | undefined) => {
  if (raw === undefined) return null;
  const k = resolveProfile(raw).kind;
  return typeof k === 'string' ? k : k.custom;
};

/** The canonical text a policy signature covers: unambiguous (a JSON array), bound to the assignment and its signer. */
export function policySignedText(a: Pick<PolicyAssignment, 'id' | 'entity_id' | 'policy'>): string {
  const kind = typeof a.policy.kind === 'string' ? a.policy.kind : a.policy.kind.custom;
  return JSON.stringify(['svc-governance-policy/v1', a.id, a.entity_id, kind, a.policy.name, a.policy.version ?? '', a.policy.signed_by ?? '', a.policy.signed_at ?? '']);
}

export class GovernanceService {
  private readonly evidence: JsonlLog<EvidenceRecord>;
  private signingKey: SigningKey | null = null;

  constructor(private readonly deps: GovernanceDeps) {
    this.evidence = new JsonlLog<EvidenceRecord>(path.join(deps.stateDir, EVIDENCE_FILE), { fsync: true });
  }

  private get config() {
    return this.deps.project.config;
  }
  private now(): number {
    return (this.deps.now ?? Date.now)();
  }

  private async view() {
    await this.deps.prepareFacts();
    return this.deps.entities.view();
  }

  private requireConfig() {
    const config = this.config;
    if (!config) throw badRequest(NO_CONFIG_MESSAGE);
    return config;
  }

  // -------------------------------------------------------------------------------------------
  // Framework, compliance, validation

  framework() {
    return {
      version: API_VERSION,
      framework: 'operational_governance',
      capabilities: CAPABILITIES,
      deployment_profiles: allProfiles().map((p) => ({ kind: p.kind, display_name: p.display_name, default_risk_level: p.default_risk_level, max_autonomy_level: p.decision_authority.max_autonomy_level })),
      standards_profiles: STANDARDS_KINDS.map((k) => {
        const s = standardsProfile(k);
        return { kind: s['kind'], package: s['package'], required_checks: ((s['required_checks'] as string[] | undefined) ?? []).length };
      }),
      autonomy_levels: [...AUTONOMY_LEVELS],
      disclaimer: DISCLAIMER,
    };
  }

  async complianceSummary() {
    const config = this.requireConfig();
    const report = complianceCheck(await this.view(), config, { strict: false });
    return { version: API_VERSION, passed: report.passed, summary: report.summary, disclaimer: DISCLAIMER };
  }

  async check(options: { strict: boolean; entityId?: string | undefined }) {
    const config = this.requireConfig();
    const report = complianceCheck(await this.view(), config, options);
    return { version: API_VERSION, report, text: complianceText(report) };
  }

  async validate(options: { strict: boolean; entityId?: string | undefined }) {
    const config = this.requireConfig();
    const { validation, compliance } = validateGovernance(await this.view(), config, options);
    return { version: API_VERSION, validation, compliance, text: `${complianceText(compliance)}\n\n${validationText(validation)}` };
  }

  // -------------------------------------------------------------------------------------------
  // Certifications, risk, accountability

  async certifications() {
    const views = governedViews(await this.view(), this.config);
    const certifications = views
      .filter((v) => v.own.certification_status !== undefined)
      .map((v) => ({
        entity_id: v.entity.id,
        entity_type: entityTypeOf(v.entity),
        certification_status: parseCertification(v.own.certification_status!),
        deployment_profile: profileText(v.own.deployment_profile),
        operational_maturity: v.own.operational_maturity !== undefined ? parseMaturity(v.own.operational_maturity) : null,
      }));
    await this.seedCertifications(views);
    return { version: API_VERSION, certifications };
  }

  /**
   * Records `cert-<entity id>` for every entity whose governance states a certification status and
   * that has no record yet, and persists them before answering (docs/governance.md § Certification
   * records): the store, not the entity metadata, is then the record of certification.
   */
  private async seedCertifications(views?: ReturnType<typeof governedViews>): Promise<void> {
    const list = views ?? governedViews(await this.view(), this.config);
    const store = this.deps.stores.certifications;
    const known = new Set(store.data.records.map((r) => r.id));
    const seeded: CertificationRecord[] = [];
    const at = new Date(this.now()).toISOString();
    for (const v of list) {
      if (v.own.certification_status === undefined) continue;
      const id = `cert-${v.entity.id}`;
      if (known.has(id)) continue;
      seeded.push({
        id,
        status: parseCertification(v.own.certification_status),
        applicable_scope: [v.entity.id],
        ...(v.own.responsible_person ? { certified_by: v.own.responsible_person } : {}),
        seeded_at: at,
      });
    }
    if (seeded.length === 0) return;
    store.change((d) => {
      d.records.push(...seeded);
      d.records.sort((a, b) => a.id.localeCompare(b.id));
    });
    await store.commit();
  }

  async certificationReport(entityId: string | undefined) {
    await this.seedCertifications();
    const now = this.now();
    const records = this.deps.stores.certifications.data.records.filter((r) => entityId === undefined || (r.applicable_scope ?? []).includes(entityId));
    const status = (r: CertificationRecord) => parseCertification(r.status);
    const expired = (r: CertificationRecord) => status(r) === 'expired' || (r.expires_at !== undefined && Date.parse(r.expires_at) < now);
    const report = {
      entity_id: entityId ?? null,
      records,
      operational_count: records.filter((r) => !expired(r) && (status(r) === 'validated' || status(r) === 'certified')).length,
      expired_count: records.filter(expired).length,
      revoked_count: records.filter((r) => status(r) === 'revoked').length,
      disclaimer: DISCLAIMER,
    };
    const lines = ['Certification Report', '====================', `Records: ${records.length} (operational ${report.operational_count}, expired ${report.expired_count}, revoked ${report.revoked_count})`];
    for (const r of records) lines.push(`  ${r.id} — ${r.status}${r.applicable_scope?.length ? ` [${r.applicable_scope.join(', ')}]` : ''}${r.expires_at ? ` expires ${r.expires_at}` : ''}`);
    return { version: API_VERSION, report, text: lines.join('\n') };
  }

  async risk() {
    const view = await this.view();
    const entities = governedViews(view, this.config)
      .filter((v) => v.own.risk_level !== undefined)
      .map((v) => {
        const s = view.status.status(v.entity.id);
        return {
          entity_id: v.entity.id,
          entity_type: entityTypeOf(v.entity),
          risk_level: parseRisk(v.own.risk_level!),
          autonomy_level: v.own.autonomy_level !== undefined ? parseAutonomy(v.own.autonomy_level) : null,
          deployment_profile: profileText(v.own.deployment_profile),
          health_status: s.health_status,
          readiness_status: s.readiness_status,
        };
      });
    return { version: API_VERSION, entities };
  }

  async accountability() {
    const entities = governedViews(await this.view(), this.config).map((v) => ({
      entity_id: v.entity.id,
      responsible_person: text(v.own.responsible_person),
      responsible_organization: text(v.own.responsible_organization),
      mission_owner: text(v.own.mission_owner),
      deployment_owner: text(v.own.deployment_owner),
      emergency_contact: text(v.own.emergency_contact),
      escalation_contact: text(v.own.escalation_contact),
      approval_chain: v.own.approval_chain ?? [],
      operational_maturity: v.own.operational_maturity !== undefined ? parseMaturity(v.own.operational_maturity) : null,
    }));
    return { version: API_VERSION, entities };
  }

  async updateAccountability(body: AccountabilityBody, actor: string) {
    const id = body.entity_id.trim();
    if (id === '') throw badRequest('entity_id is required');
    const view = await this.view();
    const overlay = this.deps.entities.overlay.data.entities[id];
    const entity = view.graph.get(id);
    if (!overlay && !entity) throw notFound(`entity '${id}' not found`);
    let decl: EntityDeclaration;
    if (overlay) {
      const { registered_at: _r, updated_at: _u, registered_by: _b, ...rest } = overlay;
      decl = { ...rest, metadata: { ...(rest.metadata ?? {}) } };
    } else {
      decl = { id, entity_type: entityTypeJson(entity!.kind, entity!.custom), metadata: {} };
    }
    const metadata = decl.metadata!;
    for (const k of ['responsible_person', 'responsible_organization', 'mission_owner', 'deployment_owner', 'emergency_contact', 'escalation_contact'] as const) {
      const v = body[k];
      if (v !== undefined) metadata[`governance.${k}`] = v;
    }
    if (body.responsible_person !== undefined) decl.owner = body.responsible_person;
    if (body.approval_chain !== undefined) metadata['governance.approval_chain'] = body.approval_chain.join('|');
    const { overlay_version } = this.deps.entities.register(decl, actor);
    const after = this.deps.entities.view().graph.get(id);
    const governance: GovernanceAttributes | null = after ? entityGovernance(after, null) : null;
    return { version: API_VERSION, entity_id: id, governance: governance && isGoverned(governance) ? governance : null, overlay_version };
  }

  // -------------------------------------------------------------------------------------------
  // Policies

  private key(create: boolean): SigningKey | null {
    if (this.signingKey) return this.signingKey;
    try {
      const key = loadSigningKey(this.deps.settings.signingKey, this.deps.stateDir, { create });
      this.signingKey = key;
      return key;
    } catch (err) {
      if (create) throw badRequest((err as Error).message);
      return null;
    }
  }

  private verifyAssignment(a: PolicyAssignment): { signature_verified: boolean; signature_problem?: string } {
    const sig = a.policy.signature;
    if (!sig) return { signature_verified: false, signature_problem: 'not signed' };
    const key = this.key(false);
    if (!key) return { signature_verified: false, signature_problem: 'signing key not available' };
    if (a.policy.signing_key_id && a.policy.signing_key_id !== key.keyId) return { signature_verified: false, signature_problem: `signed by key ${a.policy.signing_key_id}, not this instance's key ${key.keyId}` };
    return verifyEd25519(policySignedText(a), sig, key.publicKey) ? { signature_verified: true } : { signature_verified: false, signature_problem: 'signature does not verify (the assignment was altered or signed elsewhere)' };
  }

  policies() {
    const data = this.deps.stores.policies.data;
    const key = data.assignments.some((a) => a.policy.signature) || this.deps.settings.signingKey ? this.key(false) : null;
    return {
      version: API_VERSION,
      assignments: data.assignments.map((a) => (a.policy.signature ? { ...a, ...this.verifyAssignment(a) } : a)),
      audit: data.audit,
      signing_key: key ? { algorithm: 'Ed25519', key_id: key.keyId, source: key.source, public_key_pem: publicPem(key.publicKey) } : null,
    };
  }

  async assign(body: PolicyAssignBody, actor: string) {
    const view = await this.view();
    if (!view.graph.get(body.entity_id)) throw notFound(`entity '${body.entity_id}' not found`);
    const key = body.sign ? this.key(true) : null;
    const kindText = body.kind.trim().toLowerCase();
    const kind = POLICY_KINDS.has(kindText) ? kindText : { custom: body.kind.trim() };
    const store = this.deps.stores.policies;
    const at = new Date(this.now()).toISOString();
    const assignment = store.change((d) => {
      d.next_seq += 1;
      const id = `pol-${body.entity_id}-${d.next_seq}`;
      const a: PolicyAssignment = {
        id,
        entity_id: body.entity_id,
        policy: { kind, name: body.name, ...(body.version !== undefined ? { version: body.version } : {}), audit_id: `audit-${id}` },
        assigned_by: actor,
        assigned_at: at,
        audit_id: `audit-${id}`,
      };
      if (key) {
        a.policy.signed_by = actor;
        a.policy.signed_at = at;
        a.policy.signature_algorithm = 'ed25519';
        a.policy.signing_key_id = key.keyId;
        a.policy.signature = signEd25519(policySignedText(a), key.privateKey);
      }
      d.assignments.push(a);
      d.audit.push({ id: `audit-${id}`, action: 'assign', assignment_id: id, entity_id: body.entity_id, policy_name: body.name, actor, at, detail: `kind=${typeof kind === 'string' ? kind : kind.custom}` });
      return a;
    });
    return { version: API_VERSION, assignment: assignment.policy.signature ? { ...assignment, ...this.verifyAssignment(assignment) } : assignment };
  }

  detach(assignmentId: string, actor: string) {
    const store = this.deps.stores.policies;
    const found = store.data.assignments.find((a) => a.id === assignmentId);
    if (!found) throw notFound(`assignment '${assignmentId}' not found`);
    const at = new Date(this.now()).toISOString();
    const audit = store.change((d) => {
      d.assignments = d.assignments.filter((a) => a.id !== assignmentId);
      const entry: PolicyAuditEntry = { id: `audit-detach-${assignmentId}`, action: 'detach', assignment_id: assignmentId, entity_id: found.entity_id, policy_name: found.policy.name, actor, at };
      d.audit.push(entry);
      return d.audit;
    });
    return { version: API_VERSION, detached: assignmentId, audit };
  }

  async audit() {
    await this.seedCertifications();
    return { version: API_VERSION, policy_audit: this.deps.stores.policies.data.audit, certification_records: this.deps.stores.certifications.data.records.length };
  }

  // -------------------------------------------------------------------------------------------
  // Compliance profiles, exports, evidence

  private catalog() {
    return loadCatalog({ dir: this.deps.settings.catalogDir, publisherKey: this.deps.settings.catalogPubkey });
  }

  profiles() {
    const c = this.catalog();
    return {
      version: API_VERSION,
      profiles: complianceProfileNames(),
      signed_catalog: c.entries,
      catalog: { source: c.source, publisher_key_configured: c.publisher_key_configured, ...(c.publisher_key_id ? { publisher_key_id: c.publisher_key_id } : {}), ...(c.error ? { error: c.error } : {}) },
    };
  }

  /**
   * Builds the accreditation export and appends its evidence record (fsynced) before answering. When
   * the append fails the export is not acknowledged: 500, and no claim that evidence was kept.
   */
  export(profileName: string | undefined, actor: string | null) {
    const name = profileName ?? DEFAULT_COMPLIANCE_PROFILE;
    const found = findComplianceProfile(name);
    if (!found) throw badRequest(`Unknown compliance profile '${name}'`);
    const { program, label } = servedProgram(this.deps.project);
    // A template whose publisher signature verifies supplies the description; the rules stay the built-in ones.
    const template = this.catalog().entries.find((e) => e.verified && e.name === found.name);
    const profile = template ? { ...found, description: template.description } : found;
    const nowMs = this.now();
    const bundle = accreditationReport(program, profile, label, nowMs, { generatedAt: 'unix' });
    const record: EvidenceRecord = {
      exported_at_ms: nowMs,
      exported_at: new Date(nowMs).toISOString(),
      profile: bundle.profile,
      audit_export_id: bundle.audit_export_id,
      program: label,
      passed: bundle.passed,
      ...(actor ? { actor } : {}),
    };
    try {
      this.evidence.append(record);
    } catch (err) {
      this.evidence.release();
      throw new ApiError(500, 'internal_error', `compliance evidence could not be appended: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    return { version: API_VERSION, export: bundle, markdown: accreditationMarkdown(bundle), evidence_appended: true };
  }

  evidenceLog() {
    let records: EvidenceRecord[] = [];
    try {
      records = readJsonl<EvidenceRecord>(this.evidence.file).records.filter((r) => r && typeof r === 'object');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new ApiError(500, 'internal_error', `compliance evidence unreadable: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    return { version: API_VERSION, evidence: records, store: EVIDENCE_FILE };
  }

  async close(): Promise<void> {
    this.evidence.close();
    await Promise.all([this.deps.stores.policies.close(), this.deps.stores.certifications.close()]);
  }
}
