import * as z from 'zod';
import { defineSpec } from '../spec.js';

/**
 * Distributed decisions (docs/decisions.md): the decision authorities, decision trees and offline
 * policies of the loaded program, recorded decision frames, the signed offline-policy cache, decision
 * simulation under failure scenarios, escalation grants, and the fleet decision mesh (votes, conflicts,
 * nonces with replay protection). Bodies carry `api_version` (docs/api.md).
 */

/** `?file=`: the program (relative to the project root; default the server's `--program`). */
export const decisionFileQuerySchema = z.lazy(() => z.object({ file: z.string().optional() }));
export type DecisionFileQuery = z.infer<typeof decisionFileQuerySchema>;

export const decisionTraceQuerySchema = z.lazy(() => z.object({ trace: z.string().optional(), file: z.string().optional() }));
export type DecisionTraceQuery = z.infer<typeof decisionTraceQuerySchema>;

export const decisionCacheQuerySchema = z.lazy(() => z.object({ cache: z.string().optional() }));
export type DecisionCacheQuery = z.infer<typeof decisionCacheQuerySchema>;

export const decisionSimulateSchema = z.lazy(() => z.object({
  file: z.string().optional(),
  /** Default: the program's first robot. */
  entity_id: z.string().min(1).optional(),
  mission: z.string().optional(),
  offline: z.boolean().optional(),
  /** Minutes since the last sync when `offline` (default 15). */
  offline_minutes: z.number().nonnegative().optional(),
  network_partition: z.boolean().optional(),
  fleet_coordinator_failure: z.boolean().optional(),
  /** Condition text → whether it holds (`"lidar.nearest_distance < 1.27 m": true`). */
  signals: z.record(z.string(), z.boolean()).optional(),
}));
export type DecisionSimulateRequest = z.infer<typeof decisionSimulateSchema>;

export const escalateSchema = z.lazy(() => z.object({
  escalation_id: z.string().min(1),
  approver: z.string().min(1),
  entity_id: z.string().min(1).optional(),
}));
export type EscalateRequest = z.infer<typeof escalateSchema>;

export const meshConflictQuerySchema = z.lazy(() => z.object({ round: z.string().optional() }));
export type MeshConflictQuery = z.infer<typeof meshConflictQuerySchema>;

export const DECISION_LAYERS = ['reflex', 'local_entity', 'group_fleet', 'control_center'] as const;

export const fleetVoteSchema = z.lazy(() => z.object({
  round_id: z.string().min(1),
  entity_id: z.string().min(1),
  action: z.string().min(1),
  layer: z.enum(DECISION_LAYERS),
  /** Single-use: a nonce the mesh has seen before is refused (409). */
  nonce: z.string().min(8).max(128),
  reason: z.string().optional(),
  fleet_name: z.string().optional(),
  /** When the robot decided (default: when the vote arrives). */
  timestamp_ms: z.number().int().nonnegative().optional(),
}));
export type FleetVoteRequest = z.infer<typeof fleetVoteSchema>;

export const fleetNonceSchema = z.lazy(() => z.object({
  nonce: z.string().min(8).max(128),
  entity_id: z.string().min(1).optional(),
}));
export type FleetNonceRequest = z.infer<typeof fleetNonceSchema>;

export const listDecisions = defineSpec<Record<string, never>, DecisionFileQuery>({
  id: 'listDecisions',
  group: 'decisions',
  summary: 'Decision authorities, decision trees and offline policies of the program (docs/decisions.md)',
  method: 'GET',
  path: '/v1/decisions',
  access: { kind: 'sensitive-read' },
  rpc: { name: 'ListDecisions', request: 'QueryRequest' },
  jsonRpc: true,
  cli: ['decisions', 'list'],
  cliAliases: [['decision', 'list']],
  cliArgs: ['file'],
  query: decisionFileQuerySchema,
});

export const listDecisionPolicies = defineSpec<Record<string, never>, DecisionFileQuery>({
  id: 'listDecisionPolicies',
  group: 'decisions',
  summary: 'Offline policies and decision trees of the program (docs/decisions.md)',
  method: 'GET',
  path: '/v1/decision-policies',
  access: { kind: 'read' },
  rpc: { name: 'ListDecisionPolicies', request: 'QueryRequest' },
  jsonRpc: true,
  cli: ['decisions', 'policies'],
  query: decisionFileQuerySchema,
});

export const listDecisionTraces = defineSpec<Record<string, never>, DecisionTraceQuery>({
  id: 'listDecisionTraces',
  group: 'decisions',
  summary: 'Decision frames (version 3) recorded in a .trace file (docs/decisions.md, docs/program-language.md §25)',
  method: 'GET',
  path: '/v1/decisions/traces',
  access: { kind: 'sensitive-read' },
  rpc: { name: 'ListDecisionTraces', request: 'QueryRequest' },
  jsonRpc: true,
  cli: ['decisions', 'traces'],
  query: decisionTraceQuerySchema,
});

export const listDecisionPolicyCache = defineSpec<Record<string, never>, DecisionCacheQuery>({
  id: 'listDecisionPolicyCache',
  group: 'decisions',
  summary: 'The signed offline-policy cache (docs/decisions.md)',
  method: 'GET',
  path: '/v1/decision-policy-cache',
  access: { kind: 'read' },
  rpc: { name: 'ListDecisionPolicyCache', request: 'QueryRequest' },
  jsonRpc: true,
  cli: ['decisions', 'policy-cache'],
  query: decisionCacheQuerySchema,
});

export const simulateDecisions = defineSpec<DecisionSimulateRequest>({
  id: 'simulateDecisions',
  group: 'decisions',
  summary: 'Decisions of a robot under a failure scenario (offline, partition, coordinator failure), checked against authority, safety, trust and offline policies (docs/decisions.md)',
  method: 'POST',
  path: '/v1/decisions/simulate',
  access: { kind: 'sensitive-read' },
  rpc: { name: 'SimulateDecisions', request: 'JsonBodyRequest' },
  jsonRpc: true,
  cli: ['decisions', 'simulate'],
  body: decisionSimulateSchema,
});

export const escalateDecision = defineSpec<EscalateRequest>({
  id: 'escalateDecision',
  group: 'decisions',
  summary: 'Grant a decision escalation a robot waits for; 404 for an id neither pending nor raisable by the program, 409 when already granted (docs/decisions.md)',
  method: 'POST',
  path: '/v1/decisions/escalate',
  access: { kind: 'action', action: 'Operate' },
  cli: ['decisions', 'escalate'],
  body: escalateSchema,
});

export const listDecisionEscalations = defineSpec({
  id: 'listDecisionEscalations',
  group: 'decisions',
  summary: 'Pending escalations and grants from the escalation store (docs/decisions.md)',
  method: 'GET',
  path: '/v1/decisions/escalations',
  access: { kind: 'sensitive-read' },
  cli: ['decisions', 'escalations'],
});

export const getDecisionMesh = defineSpec({
  id: 'getDecisionMesh',
  group: 'decisions',
  summary: 'Fleet decision mesh status: proxied to SVC_FLEET_MESH_URL when set, else this agent\'s own votes and nonces (docs/decisions.md)',
  method: 'GET',
  path: '/v1/decisions/mesh',
  access: { kind: 'sensitive-read' },
  cli: ['decisions', 'mesh'],
});

export const getDecisionMeshConflicts = defineSpec<Record<string, never>, MeshConflictQuery>({
  id: 'getDecisionMeshConflicts',
  group: 'decisions',
  summary: 'Conflict resolution of one voting round by layer precedence: proxied to SVC_FLEET_MESH_URL when set, else from this agent\'s votes (docs/decisions.md)',
  method: 'GET',
  path: '/v1/decisions/mesh/conflicts',
  access: { kind: 'sensitive-read' },
  cli: ['decisions', 'mesh', 'conflicts'],
  query: meshConflictQuerySchema,
});

export const ingestFleetDecisionVote = defineSpec<FleetVoteRequest>({
  id: 'ingestFleetDecisionVote',
  group: 'decisions',
  summary: 'Record a robot\'s decision vote in a round; its nonce is single-use (409 on reuse) (docs/decisions.md)',
  method: 'POST',
  path: '/v1/fleet/decisions/vote/ingest',
  access: { kind: 'action', action: 'Operate' },
  cli: ['fleet', 'decisions', 'vote'],
  body: fleetVoteSchema,
});

export const registerFleetDecisionNonce = defineSpec<FleetNonceRequest>({
  id: 'registerFleetDecisionNonce',
  group: 'decisions',
  summary: 'Register a decision nonce as used; 409 when it was used before (docs/decisions.md)',
  method: 'POST',
  path: '/v1/fleet/decisions/nonce/register',
  access: { kind: 'action', action: 'Operate' },
  cli: ['fleet', 'decisions', 'nonce', 'register'],
  body: fleetNonceSchema,
});

export const getFleetDecisionNonceStatus = defineSpec({
  id: 'getFleetDecisionNonceStatus',
  group: 'decisions',
  summary: 'How many decision nonces this agent has seen, and the latest (docs/decisions.md)',
  method: 'GET',
  path: '/v1/fleet/decisions/nonce/status',
  access: { kind: 'sensitive-read' },
  cli: ['fleet', 'decisions', 'nonce', 'status'],
});

export const getFleetDecisionConflicts = defineSpec<Record<string, never>, MeshConflictQuery>({
  id: 'getFleetDecisionConflicts',
  group: 'decisions',
  summary: 'Conflict resolution of one voting round from this agent\'s recorded votes (docs/decisions.md)',
  method: 'GET',
  path: '/v1/fleet/decisions/conflicts',
  access: { kind: 'sensitive-read' },
  cli: ['fleet', 'decisions', 'conflicts'],
  query: meshConflictQuerySchema,
});

export const decisionSpecs = [
  listDecisions,
  listDecisionPolicies,
  listDecisionTraces,
  listDecisionPolicyCache,
  simulateDecisions,
  escalateDecision,
  listDecisionEscalations,
  getDecisionMesh,
  getDecisionMeshConflicts,
  ingestFleetDecisionVote,
  registerFleetDecisionNonce,
  getFleetDecisionNonceStatus,
  getFleetDecisionConflicts,
];
