import {
  escalateDecision,
  getDecisionMesh,
  getDecisionMeshConflicts,
  getFleetDecisionConflicts,
  getFleetDecisionNonceStatus,
  ingestFleetDecisionVote,
  listDecisionEscalations,
  listDecisionPolicies,
  listDecisionPolicyCache,
  listDecisions,
  listDecisionTraces,
  registerFleetDecisionNonce,
  simulateDecisions,
} from '../../api/domains/decisions.js';
import { handlersFor } from '../core/handlers.js';

const on = handlersFor(['decisions']);

/** Distributed decisions (docs/decisions.md) over the decision service. */
export const decisionHandlers = [
  on(listDecisions, ({ query }, ctx) => ctx.services.decisions.list(query)),
  on(listDecisionPolicies, ({ query }, ctx) => ctx.services.decisions.policies(query)),
  on(listDecisionTraces, ({ query }, ctx) => ctx.services.decisions.traces(query)),
  on(listDecisionPolicyCache, ({ query }, ctx) => ctx.services.decisions.policyCache(query)),
  on(simulateDecisions, ({ body }, ctx) => ctx.services.decisions.simulate(body)),
  on(escalateDecision, ({ body }, ctx) => ctx.services.decisions.escalate(body, ctx.principal?.key_id ?? null)),
  on(listDecisionEscalations, (_i, ctx) => ctx.services.decisions.listEscalations()),
  on(getDecisionMesh, (_i, ctx) => ctx.services.decisions.meshStatus()),
  on(getDecisionMeshConflicts, ({ query }, ctx) => ctx.services.decisions.meshConflicts(query)),
  on(ingestFleetDecisionVote, ({ body }, ctx) => ctx.services.decisions.ingestVote(body, ctx.principal?.key_id ?? null)),
  on(registerFleetDecisionNonce, ({ body }, ctx) => ctx.services.decisions.registerNonce(body)),
  on(getFleetDecisionNonceStatus, (_i, ctx) => ctx.services.decisions.nonceStatus()),
  on(getFleetDecisionConflicts, ({ query }, ctx) => ctx.services.decisions.conflicts(query)),
];
