/**
 * The governance area's persisted state (docs/governance.md § State): policy assignments with their
 * audit trail, and certification records. Both are JsonStores in the state directory (atomic,
 * fsynced writes; a 2xx means on disk). When a store file does not exist yet but an earlier
 * deployment left one in the working directory, that file is its starting content (migration).
 */
import fs from 'node:fs';
import path from 'node:path';
import { JsonStore } from '../state/json-store.js';

export interface PolicyRecord {
  kind: string | { custom: string };
  name: string;
  version?: string;
  package?: string;
  /** Hex Ed25519 signature of the assignment's signed text (docs/governance.md § Policy signatures). */
  signature?: string;
  signature_algorithm?: 'ed25519';
  signing_key_id?: string;
  signed_by?: string;
  signed_at?: string;
  audit_id?: string;
}

export interface PolicyAssignment {
  id: string;
  entity_id: string;
  policy: PolicyRecord;
  assigned_by?: string;
  assigned_at?: string;
  audit_id?: string;
}

export interface PolicyAuditEntry {
  id: string;
  action: 'assign' | 'detach';
  assignment_id: string;
  entity_id: string;
  policy_name: string;
  actor?: string;
  at: string;
  detail?: string;
}

export interface PolicyFile {
  /** Monotonic: an assignment id is never reused, even after a detach. */
  next_seq: number;
  assignments: PolicyAssignment[];
  audit: PolicyAuditEntry[];
}

export interface CertificationEvidence {
  id: string;
  kind?: string;
  uri?: string;
  hash?: string;
  collected_at?: string;
}

export interface CertificationRecord {
  id: string;
  status: string;
  version?: string;
  certified_by?: string;
  certified_at?: string;
  reason?: string;
  evidence?: CertificationEvidence[];
  applicable_scope?: string[];
  expires_at?: string;
  /** When the agent first recorded it from entity governance (absent for records written by tooling). */
  seeded_at?: string;
}

export interface CertificationFile {
  records: CertificationRecord[];
}

export const POLICY_FILE = 'control-center-governance-policies.json';
export const CERTIFICATION_FILE = 'control-center-certifications.json';

const isObj = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

function revivePolicies(raw: unknown): PolicyFile {
  if (!isObj(raw)) throw new Error('expected an object');
  const assignments = Array.isArray(raw['assignments']) ? (raw['assignments'] as PolicyAssignment[]).filter((a) => isObj(a) && typeof a.id === 'string' && typeof a.entity_id === 'string' && isObj(a.policy)) : [];
  const audit = Array.isArray(raw['audit']) ? (raw['audit'] as PolicyAuditEntry[]).filter((e) => isObj(e) && typeof e.id === 'string') : [];
  // A file from a deployment without the counter: continue after the highest number in use.
  const used = [...assignments.map((a) => a.id), ...audit.map((e) => e.assignment_id ?? '')].map((id) => Number(/-(\d+)$/.exec(String(id))?.[1] ?? 0));
  const seq = Number.isSafeInteger(raw['next_seq']) ? (raw['next_seq'] as number) : 0;
  return { next_seq: Math.max(seq, ...used, 0), assignments, audit };
}

function reviveCertifications(raw: unknown): CertificationFile {
  if (!isObj(raw)) throw new Error('expected an object');
  const records = Array.isArray(raw['records']) ? (raw['records'] as CertificationRecord[]).filter((r) => isObj(r) && typeof r.id === 'string' && typeof r.status === 'string') : [];
  return { records };
}

/** The state-directory file, seeded from a working-directory file of the same name when only that one exists. */
function migrate(stateDir: string, name: string): string {
  const file = path.join(stateDir, name);
  const legacy = path.resolve(name);
  if (!fs.existsSync(file) && legacy !== file && fs.existsSync(legacy)) {
    try {
      fs.mkdirSync(stateDir, { recursive: true });
      fs.copyFileSync(legacy, file, fs.constants.COPYFILE_EXCL);
    } catch {
      /* unreadable legacy file: start empty */
    }
  }
  return file;
}

export interface GovernanceStores {
  policies: JsonStore<PolicyFile>;
  certifications: JsonStore<CertificationFile>;
}

export async function openGovernanceStores(stateDir: string): Promise<GovernanceStores> {
  const [policies, certifications] = await Promise.all([
    JsonStore.open<PolicyFile>(migrate(stateDir, POLICY_FILE), { defaults: () => ({ next_seq: 0, assignments: [], audit: [] }), revive: revivePolicies }),
    JsonStore.open<CertificationFile>(migrate(stateDir, CERTIFICATION_FILE), { defaults: () => ({ records: [] }), revive: reviveCertifications }),
  ]);
  return { policies, certifications };
}
