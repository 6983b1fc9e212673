import * as z from 'zod';
import { defineSpec } from '../spec.js';

/**
 * Operational governance and compliance (docs/governance.md): the governance framework catalogue,
 * governance validation and the compliance check over governed entities, certification records,
 * operational risk, signed policy assignments with their audit, accountability, and the program's
 * compliance profiles with accreditation exports and their append-only evidence log.
 */
const checkBody = z.lazy(() =>
  z.object({
    strict: z.boolean().optional(),
    entity_id: z.string().max(256).optional(),
  }),
);
const checkQuery = z.lazy(() =>
  z.object({
    strict: z.string().max(16).optional(),
    entity_id: z.string().max(256).optional(),
  }),
);
const entityQuery = z.lazy(() => z.object({ entity_id: z.string().max(256).optional() }));
const assignBody = z.lazy(() =>
  z.object({
    entity_id: z.string().min(1).max(256),
    kind: z.string().min(1).max(128),
    name: z.string().min(1).max(256),
    version: z.string().max(128).optional(),
    sign: z.boolean().optional(),
  }),
);
const detachBody = z.lazy(() => z.object({ assignment_id: z.string().min(1).max(512) }));
const optText = () => z.string().max(512).optional();
const accountabilityBody = z.lazy(() =>
  z.object({
    entity_id: z.string().max(256),
    responsible_person: optText(),
    responsible_organization: optText(),
    mission_owner: optText(),
    deployment_owner: optText(),
    emergency_contact: optText(),
    escalation_contact: optText(),
    approval_chain: z.array(z.string().min(1).max(128)).max(32).optional(),
  }),
);
const exportQuery = z.lazy(() => z.object({ profile: z.string().max(128).optional() }));
const exportBody = z.lazy(() => z.object({ profile: z.string().max(128).optional() }));

export type GovernanceCheckBody = z.infer<typeof checkBody>;
export type GovernanceCheckQuery = z.infer<typeof checkQuery>;
export type PolicyAssignBody = z.infer<typeof assignBody>;
export type PolicyDetachBody = z.infer<typeof detachBody>;
export type AccountabilityBody = z.infer<typeof accountabilityBody>;
export type ComplianceExportQuery = z.infer<typeof exportQuery>;

const OPERATE = { kind: 'action', action: 'Operate' } as const;
const DEPLOY = { kind: 'action', action: 'Deploy' } as const;

export const getGovernance = defineSpec({
  id: 'getGovernance',
  group: 'governance',
  summary: 'The operational governance framework: capabilities, deployment and standards profiles, autonomy levels',
  method: 'GET',
  path: '/v1/governance',
  access: { kind: 'read' },
  rpc: { name: 'GetGovernance', request: 'Empty' },
  cli: ['governance', 'summary'],
});

export const validateGovernance = defineSpec<GovernanceCheckBody, GovernanceCheckQuery>({
  id: 'validateGovernance',
  group: 'governance',
  summary: 'Validate the [governance] section and every governed entity (read-only; strict also fails on warnings)',
  method: 'POST',
  path: '/v1/governance/validate',
  access: OPERATE,
  rpc: { name: 'ValidateGovernance', request: 'JsonBodyRequest' },
  cli: ['governance', 'validate'],
  body: checkBody,
  query: checkQuery,
});

export const getCompliance = defineSpec({
  id: 'getCompliance',
  group: 'governance',
  summary: 'Compliance summary of the governed entities (non-strict)',
  method: 'GET',
  path: '/v1/compliance',
  access: OPERATE,
  rpc: { name: 'GetCompliance', request: 'Empty' },
  cli: ['compliance', 'summary'],
});

export const checkCompliance = defineSpec<GovernanceCheckBody, GovernanceCheckQuery>({
  id: 'checkCompliance',
  group: 'governance',
  summary: 'Compliance check of the governed entities, or of one (read-only)',
  method: 'POST',
  path: '/v1/compliance/check',
  access: OPERATE,
  rpc: { name: 'CheckCompliance', request: 'JsonBodyRequest' },
  cli: ['compliance', 'check'],
  body: checkBody,
  query: checkQuery,
});

export const listCertifications = defineSpec({
  id: 'listCertifications',
  group: 'governance',
  summary: 'Certification status of every entity whose governance states one',
  method: 'GET',
  path: '/v1/certifications',
  access: OPERATE,
  rpc: { name: 'ListCertifications', request: 'Empty' },
  cli: ['certifications', 'list'],
});

export const getCertificationReport = defineSpec<Record<string, never>, { entity_id?: string | undefined }>({
  id: 'getCertificationReport',
  group: 'governance',
  summary: 'Persisted certification records (seeded once from entity governance), optionally for one entity',
  method: 'GET',
  path: '/v1/certifications/report',
  access: OPERATE,
  cli: ['certifications', 'report'],
  query: entityQuery,
});

export const getOperationalRisk = defineSpec({
  id: 'getOperationalRisk',
  group: 'governance',
  summary: 'Operational risk of every entity whose governance states one, with its health and readiness',
  method: 'GET',
  path: '/v1/risk',
  access: OPERATE,
  rpc: { name: 'GetOperationalRisk', request: 'Empty' },
  cli: ['risk', 'summary'],
});

export const listGovernancePolicies = defineSpec({
  id: 'listGovernancePolicies',
  group: 'governance',
  summary: 'Policy assignments (with their Ed25519 signature check) and the policy audit trail',
  method: 'GET',
  path: '/v1/governance/policies',
  access: OPERATE,
  cli: ['governance', 'policies'],
});

export const assignGovernancePolicy = defineSpec<PolicyAssignBody>({
  id: 'assignGovernancePolicy',
  group: 'governance',
  summary: 'Assign a policy to a registry entity; with sign:true the assignment is signed with the instance Ed25519 key',
  method: 'POST',
  path: '/v1/governance/policies/assign',
  access: DEPLOY,
  cli: ['governance', 'assign-policy'],
  body: assignBody,
});

export const detachGovernancePolicy = defineSpec<PolicyDetachBody>({
  id: 'detachGovernancePolicy',
  group: 'governance',
  summary: 'Detach a policy assignment (kept in the audit trail)',
  method: 'POST',
  path: '/v1/governance/policies/detach',
  access: DEPLOY,
  cli: ['governance', 'detach-policy'],
  cliArgs: ['assignment_id'],
  body: detachBody,
});

export const getGovernanceAudit = defineSpec({
  id: 'getGovernanceAudit',
  group: 'governance',
  summary: 'Policy audit trail and the number of persisted certification records',
  method: 'GET',
  path: '/v1/governance/audit',
  access: OPERATE,
  cli: ['governance', 'audit'],
});

export const getAccountability = defineSpec({
  id: 'getAccountability',
  group: 'governance',
  summary: 'Who answers for each governed entity: responsible person, owners, contacts, approval chain',
  method: 'GET',
  path: '/v1/governance/accountability',
  access: OPERATE,
  cli: ['governance', 'accountability'],
});

export const updateAccountability = defineSpec<AccountabilityBody>({
  id: 'updateAccountability',
  group: 'governance',
  summary: "Set an entity's accountability (stored in the entity overlay)",
  method: 'PUT',
  path: '/v1/governance/accountability',
  access: DEPLOY,
  cli: ['governance', 'set-accountability'],
  body: accountabilityBody,
});

export const postAccountability = defineSpec<AccountabilityBody>({
  id: 'postAccountability',
  group: 'governance',
  summary: "Set an entity's accountability (same as PUT, for clients that only POST)",
  method: 'POST',
  path: '/v1/governance/accountability',
  access: DEPLOY,
  cli: false,
  body: accountabilityBody,
});

export const listComplianceProfiles = defineSpec({
  id: 'listComplianceProfiles',
  group: 'governance',
  summary: 'Compliance profile names and the signed template catalogue with its verification result',
  method: 'GET',
  path: '/v1/compliance/profiles',
  access: { kind: 'sensitive-read' },
  cli: ['compliance', 'profiles'],
});

export const exportCompliance = defineSpec<Record<string, never>, ComplianceExportQuery>({
  id: 'exportCompliance',
  group: 'governance',
  summary: 'Accreditation export of the loaded program against a compliance profile (default defense); appends an evidence record',
  method: 'GET',
  path: '/v1/compliance/export',
  access: DEPLOY,
  // Every call appends an evidence record: audited like a mutation (api/spec.ts#writes).
  writes: true,
  rpc: { name: 'ExportCompliance', request: 'QueryRequest' },
  cli: ['compliance', 'export'],
  query: exportQuery,
});

export const postComplianceExport = defineSpec<{ profile?: string | undefined }, ComplianceExportQuery>({
  id: 'postComplianceExport',
  group: 'governance',
  summary: 'Accreditation export (profile from the body, else the query); appends an evidence record',
  method: 'POST',
  path: '/v1/compliance/export',
  access: DEPLOY,
  cli: false,
  body: exportBody,
  query: exportQuery,
});

export const listComplianceEvidence = defineSpec({
  id: 'listComplianceEvidence',
  group: 'governance',
  summary: 'The append-only evidence log of compliance exports, oldest first',
  method: 'GET',
  path: '/v1/compliance/evidence',
  access: DEPLOY,
  rpc: { name: 'ListComplianceEvidence', request: 'Empty' },
  cli: ['compliance', 'evidence'],
});

export const governanceSpecs = [
  getGovernance,
  validateGovernance,
  getCompliance,
  checkCompliance,
  listCertifications,
  getCertificationReport,
  getOperationalRisk,
  listGovernancePolicies,
  assignGovernancePolicy,
  detachGovernancePolicy,
  getGovernanceAudit,
  getAccountability,
  updateAccountability,
  postAccountability,
  listComplianceProfiles,
  exportCompliance,
  postComplianceExport,
  listComplianceEvidence,
];
