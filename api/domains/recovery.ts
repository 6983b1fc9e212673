import * as z from 'zod';
import { defineSpec } from '../spec.js';

/**
 * The recovery orchestrator (docs/recovery.md): plans, simulations, validations and executions of
 * recoveries for registry entities, the recovery graph, policies, playbooks, predictive indicators
 * and the persisted evidence history. Every POST takes the same body; unknown fields are ignored.
 */
export const recoveryBodySchema = z.lazy(() =>
  z.object({
    file: z.string().max(4096).optional(),
    entity_id: z.string().max(256).optional(),
    failure: z.string().max(256).optional(),
    playbook: z.string().max(256).optional(),
    force_execute: z.boolean().optional(),
    telemetry: z.record(z.string(), z.unknown()).optional(),
  }),
);
export type RecoveryBody = z.infer<typeof recoveryBodySchema>;

export const recoveryGraphQuerySchema = z.lazy(() => z.object({ entity_id: z.string().max(256).optional() }));

/** `svc recovery plan FILE [--failure KIND] [--entity ID] [--playbook NAME]`. */
const RECOVERY_CLI = { cliArgs: ['file'], cliOptions: { entity: 'entity_id', force: 'force_execute' } };

const get = (id: string, path: string, summary: string, rpc: string | null, cli: string[]) =>
  defineSpec({
    id,
    group: 'recovery',
    summary,
    method: 'GET',
    path,
    access: { kind: 'sensitive-read' },
    ...(rpc ? { rpc: { name: rpc, request: 'Empty' as const } } : {}),
    cli,
  });

const post = (id: string, path: string, summary: string, rpc: string, cli: string[]) =>
  defineSpec<RecoveryBody>({
    id,
    group: 'recovery',
    summary,
    method: 'POST',
    path,
    access: { kind: 'sensitive-read' },
    rpc: { name: rpc, request: 'JsonBodyRequest' },
    cli,
    ...RECOVERY_CLI,
    body: recoveryBodySchema,
  });

export const listRecoveryPlans = get('listRecoveryPlans', '/v1/recovery/plans', 'Recovery plans for the default targets against the server program', 'ListRecoveryPlans', ['recovery', 'plans']);
export const getRecoveryHistory = get('getRecoveryHistory', '/v1/recovery/history', 'Recorded recovery evidence, newest first (at most 100)', 'GetRecoveryHistory', ['recovery', 'history']);
export const getRecoveryMetrics = get('getRecoveryMetrics', '/v1/recovery/metrics', 'Recovery metrics measured from the history, with knowledge priors kept apart', 'GetRecoveryMetrics', ['recovery', 'metrics']);
export const listRecoveryPlaybooks = get('listRecoveryPlaybooks', '/v1/recovery/playbooks', 'Recovery playbooks: built-ins and configuration', 'ListRecoveryPlaybooks', ['recovery', 'playbooks']);
export const listRecoveryPolicies = get('listRecoveryPolicies', '/v1/recovery/policies', 'Per-entity recovery policies from the [recovery] configuration', 'ListRecoveryPolicies', ['recovery', 'policies']);
export const getRecoveryPredictiveGet = get('getRecoveryPredictiveLatest', '/v1/recovery/predictive', 'Predictive indicators from the latest telemetry per device and entity health', null, ['recovery', 'predictive']);
export const listRecoverableEntities = get('listRecoverableEntities', '/v1/recovery/recoverable-entities', 'Registry entities a recovery can target', 'ListRecoverableEntities', ['recovery', 'recoverable-entities']);

export const getRecoveryGraph = defineSpec<Record<string, never>, { entity_id?: string | undefined }>({
  id: 'getRecoveryGraph',
  group: 'recovery',
  summary: 'Dependency, impact and recovery edges over the registry, optionally rooted at an entity',
  method: 'GET',
  path: '/v1/recovery/graph',
  access: { kind: 'sensitive-read' },
  rpc: { name: 'GetRecoveryGraph', request: 'QueryRequest' },
  cli: ['recovery', 'graph'],
  query: recoveryGraphQuerySchema,
});

export const getRecoveryPredictive = post('getRecoveryPredictive', '/v1/recovery/predictive', 'Predictive indicators from posted telemetry (else the telemetry store) and entity health', 'GetRecoveryPredictive', ['recovery', 'predict']);
export const planRecovery = post('planRecovery', '/v1/recovery/plan', 'Plan recoveries for (entity, failure) targets', 'PlanRecovery', ['recovery', 'plan']);
export const simulateRecovery = post('simulateRecovery', '/v1/recovery/simulate', 'Plan and validate recoveries without executing them (one evidence per plan)', 'SimulateRecovery', ['recovery', 'simulate']);
export const validateRecovery = post('validateRecovery', '/v1/recovery/validate', 'Dry run: validation gates of each plan', 'ValidateRecovery', ['recovery', 'validate']);
export const explainRecovery = post('explainRecovery', '/v1/recovery/explain', 'The recovery decision for one entity and failure, with its reasons', 'ExplainRecovery', ['recovery', 'explain']);
export const recommendRecovery = post('recommendRecovery', '/v1/recovery/recommend', 'Best known recovery for a failure, with its success rate learned from the history', 'RecommendRecovery', ['recovery', 'recommend']);

export const executeRecovery = defineSpec<RecoveryBody>({
  id: 'executeRecovery',
  group: 'recovery',
  summary: 'Plan, and with force_execute apply the recovery effects, measure them and record the evidence',
  method: 'POST',
  path: '/v1/recovery/execute',
  access: { kind: 'action', action: 'Recover' },
  rpc: { name: 'ExecuteRecovery', request: 'JsonBodyRequest' },
  cli: ['recovery', 'execute'],
  ...RECOVERY_CLI,
  body: recoveryBodySchema,
});

export const recoverySpecs = [
  listRecoveryPlans,
  getRecoveryHistory,
  getRecoveryMetrics,
  listRecoveryPlaybooks,
  listRecoveryPolicies,
  getRecoveryGraph,
  getRecoveryPredictiveGet,
  getRecoveryPredictive,
  listRecoverableEntities,
  planRecovery,
  simulateRecovery,
  validateRecovery,
  explainRecovery,
  recommendRecovery,
  executeRecovery,
];
