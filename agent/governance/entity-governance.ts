/**
 * An entity's governance attributes (docs/operations.md § Deployment gate, profiles and
 * verification, "Governance of an entity"): who answers for it, how autonomous and how risky it is,
 * how mature, how certified. Read from the entity's `governance.*` metadata keys, its declared
 * `governance` table, its `owner`, and, for the fleet and its robots, the project's `[governance]`
 * section filling the gaps. Pure: no registry, no I/O.
 */
import type { ResolvedConfig } from '../project/resolve-config.js';
import { AUTONOMY_LEVELS, RISK_LEVELS, type AutonomyLevel, type RiskLevel } from '../deployment/profiles.js';

export const MATURITY_STAGES = ['concept', 'prototype', 'simulation', 'laboratory', 'pilot', 'pre_production', 'production', 'mission_critical', 'certified', 'retired'] as const;
export type MaturityStage = (typeof MATURITY_STAGES)[number];

export const CERTIFICATION_STATUSES = ['draft', 'under_review', 'testing', 'validated', 'certified', 'expired', 'revoked', 'suspended', 'deprecated', 'archived'] as const;
export type CertificationStatus = (typeof CERTIFICATION_STATUSES)[number];

/** Maturity stages at which a robot works for real (live deployment). */
export const LIVE_MATURITY: ReadonlySet<MaturityStage> = new Set(['pilot', 'pre_production', 'production', 'mission_critical', 'certified']);
/** Certification statuses that allow operation. */
export const OPERATIONAL_CERTIFICATION: ReadonlySet<CertificationStatus> = new Set(['validated', 'certified']);

const norm = (v: string) => v.trim().toLowerCase().replace(/[-\s]/g, '_');

const AUTONOMY_ALIASES: Record<string, AutonomyLevel> = { partial: 'partial_automation', conditional: 'conditional_autonomy', high: 'high_autonomy', full: 'full_autonomy' };
const MATURITY_ALIASES: Record<string, MaturityStage> = { sim: 'simulation', lab: 'laboratory', preproduction: 'pre_production', staging: 'pre_production', prod: 'production', decommissioned: 'retired' };
const CERT_ALIASES: Record<string, CertificationStatus> = { review: 'under_review', test: 'testing' };
const RISK_ALIASES: Record<string, RiskLevel> = { minimal: 'negligible', moderate: 'medium', lifecritical: 'life_critical', safety_critical: 'life_critical' };

function oneOf<T extends string>(values: readonly T[], aliases: Record<string, T>, fallback: T, raw: string): T {
  const n = norm(raw);
  if ((values as readonly string[]).includes(n)) return n as T;
  return aliases[n] ?? fallback;
}

/** `manual`…`full_autonomy`; also `0`–`5`, `l2`, `level_2`, `partial`…; anything else is manual. */
export function parseAutonomy(raw: string): AutonomyLevel {
  const m = /^(?:l|level_?)?([0-5])$/.exec(norm(raw));
  if (m) return AUTONOMY_LEVELS[Number(m[1])]!;
  return oneOf(AUTONOMY_LEVELS, AUTONOMY_ALIASES, 'manual', raw);
}
export const parseMaturity = (raw: string): MaturityStage => oneOf(MATURITY_STAGES, MATURITY_ALIASES, 'concept', raw);
export const parseCertification = (raw: string): CertificationStatus => oneOf(CERTIFICATION_STATUSES, CERT_ALIASES, 'draft', raw);
export const parseRisk = (raw: string): RiskLevel => oneOf(RISK_LEVELS, RISK_ALIASES, 'negligible', raw);

/** The governance attributes as stated (raw strings); absent = not stated. */
export interface GovernanceAttributes {
  autonomy_level?: string;
  deployment_profile?: string;
  operational_maturity?: string;
  certification_status?: string;
  risk_level?: string;
  responsible_person?: string;
  responsible_organization?: string;
  mission_owner?: string;
  deployment_owner?: string;
  emergency_contact?: string;
  escalation_contact?: string;
  approval_chain?: string[];
}

const TEXT_KEYS = [
  'autonomy_level',
  'deployment_profile',
  'operational_maturity',
  'certification_status',
  'risk_level',
  'responsible_person',
  'responsible_organization',
  'mission_owner',
  'deployment_owner',
  'emergency_contact',
  'escalation_contact',
] as const;

/** Keys whose presence makes an entity governed (otherwise governance checks skip it). */
const GOVERNING_KEYS = ['autonomy_level', 'deployment_profile', 'operational_maturity', 'certification_status', 'risk_level', 'responsible_person', 'deployment_owner', 'emergency_contact'] as const;
/** Keys of `[governance]` that make the section apply to the fleet and its robots. */
const STAMPING_KEYS = ['autonomy_level', 'deployment_profile', 'operational_maturity', 'certification_status', 'risk_level'] as const;

function text(v: unknown): string | undefined {
  if (typeof v === 'string' && v.trim() !== '') return v.trim();
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return undefined;
}

/** A contact may be a string or a table `{name, role, email, phone, organization}`: its email, else its name. */
function contact(v: unknown): string | undefined {
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    const t = v as Record<string, unknown>;
    return text(t['email']) ?? text(t['name']) ?? text(t['phone']);
  }
  return text(v);
}

function chain(v: unknown): string[] | undefined {
  if (typeof v === 'string') {
    const roles = v.split('|').map((s) => s.trim()).filter(Boolean);
    return roles.length ? roles : undefined;
  }
  if (Array.isArray(v)) {
    const roles = v.map((s) => (s && typeof s === 'object' ? text((s as Record<string, unknown>)['role']) : text(s))).filter((s): s is string => !!s);
    return roles.length ? roles : undefined;
  }
  return undefined;
}

/** Attributes from a plain table (`[governance]`, a declared entity `governance` table). */
export function attributesFromTable(t: Record<string, unknown> | null | undefined): GovernanceAttributes {
  const out: GovernanceAttributes = {};
  if (!t) return out;
  for (const k of TEXT_KEYS) {
    const v = k === 'emergency_contact' || k === 'escalation_contact' ? contact(t[k]) : text(t[k]);
    if (v !== undefined) out[k] = v;
  }
  const c = chain(t['approval_chain']);
  if (c) out.approval_chain = c;
  return out;
}

/** Attributes from flat `governance.<key>` metadata strings. */
export function attributesFromMetadata(metadata: Readonly<Record<string, string>>): GovernanceAttributes {
  const table: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(metadata)) if (k.startsWith('governance.')) table[k.slice('governance.'.length)] = v;
  return attributesFromTable(table);
}

/** The `[governance]` section of the merged configuration (empty without one). */
export function systemGovernance(config: ResolvedConfig | null): { table: Record<string, unknown>; attributes: GovernanceAttributes } {
  const raw = config?.tree['governance'];
  const table = raw && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
  return { table, attributes: attributesFromTable(table) };
}

/** The entities `[governance]` applies to when it states one of the stamping keys: the fleet and its robots. */
export function stampedEntityIds(config: ResolvedConfig | null): Set<string> {
  const system = systemGovernance(config).attributes;
  if (!config || !STAMPING_KEYS.some((k) => system[k] !== undefined)) return new Set();
  return new Set([...(config.fleetId ? [config.fleetId] : []), ...config.robots.map((r) => r.id).filter(Boolean)]);
}

/** What of an entity the projection reads (a registry entity fits). */
export interface GovernedEntitySource {
  id: string;
  owner?: string | undefined;
  metadata: Readonly<Record<string, string>>;
  governance?: Record<string, unknown> | null | undefined;
}

/**
 * The entity's governance: metadata keys first (what an operator set last), then its declared
 * table, then, for stamped entities, the system section; the entity `owner` is the responsible
 * person when set.
 */
export function entityGovernance(e: GovernedEntitySource, system: GovernanceAttributes | null): GovernanceAttributes {
  const merged: GovernanceAttributes = { ...(system ?? {}), ...attributesFromTable(e.governance ?? null), ...attributesFromMetadata(e.metadata) };
  const owner = text(e.owner);
  if (owner) merged.responsible_person = owner;
  return merged;
}

export function isGoverned(g: GovernanceAttributes): boolean {
  return GOVERNING_KEYS.some((k) => g[k] !== undefined);
}
