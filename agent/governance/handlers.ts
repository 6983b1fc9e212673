import {
  assignGovernancePolicy,
  checkCompliance,
  detachGovernancePolicy,
  exportCompliance,
  getAccountability,
  getCertificationReport,
  getCompliance,
  getGovernance,
  getGovernanceAudit,
  getOperationalRisk,
  listCertifications,
  listComplianceEvidence,
  listComplianceProfiles,
  listGovernancePolicies,
  postAccountability,
  postComplianceExport,
  updateAccountability,
  validateGovernance,
  type GovernanceCheckBody,
  type GovernanceCheckQuery,
} from '../../api/domains/governance.js';
import { RPC_METHOD_PREFIX } from '../../api/rpc-contract.js';
import { handlersFor } from '../core/handlers.js';
import type { CallContext, HandlerContext } from '../core/operation.js';
import type { Services } from '../runtime/services.js';
import { commitState } from '../state/commit.js';

const on = handlersFor(['governance', 'audit']);

const actor = (ctx: Pick<CallContext, 'principal'>) => ctx.principal?.user_id ?? ctx.principal?.key_id ?? 'system';

/** `strict` from the body, or `?strict=true|1` (the query wins); `entity_id` from the query, else the body (docs/governance.md). */
function checkOptions(body: GovernanceCheckBody, query: GovernanceCheckQuery) {
  const strict = query.strict !== undefined ? ['true', '1'].includes(query.strict.trim().toLowerCase()) : body.strict === true;
  const entityId = query.entity_id ?? body.entity_id;
  return { strict, entityId };
}

/** Operational governance and compliance (docs/governance.md). */
export const governanceHandlers = [
  on(getGovernance, async (_i, ctx) => (await ctx.services.governance.get()).framework()),
  on(validateGovernance, async ({ body, query }, ctx) => (await ctx.services.governance.get()).validate(checkOptions(body, query))),
  on(getCompliance, async (_i, ctx) => (await ctx.services.governance.get()).complianceSummary()),
  on(checkCompliance, async ({ body, query }, ctx) => (await ctx.services.governance.get()).check(checkOptions(body, query))),
  on(listCertifications, async (_i, ctx) => (await ctx.services.governance.get()).certifications()),
  on(getCertificationReport, async ({ query }, ctx) => (await ctx.services.governance.get()).certificationReport(query.entity_id)),
  on(getOperationalRisk, async (_i, ctx) => (await ctx.services.governance.get()).risk()),
  on(listGovernancePolicies, async (_i, ctx) => (await ctx.services.governance.get()).policies()),
  on(assignGovernancePolicy, async ({ body }, ctx) => (await ctx.services.governance.get()).assign(body, actor(ctx))),
  on(detachGovernancePolicy, async ({ body }, ctx) => (await ctx.services.governance.get()).detach(body.assignment_id, actor(ctx))),
  on(getGovernanceAudit, async (_i, ctx) => (await ctx.services.governance.get()).audit()),
  on(getAccountability, async (_i, ctx) => (await ctx.services.governance.get()).accountability()),
  on(updateAccountability, async ({ body }, ctx) => (await ctx.services.governance.get()).updateAccountability(body, actor(ctx))),
  on(postAccountability, async ({ body }, ctx) => (await ctx.services.governance.get()).updateAccountability(body, actor(ctx))),
  on(listComplianceProfiles, async (_i, ctx) => (await ctx.services.governance.get()).profiles()),
  on(exportCompliance, async ({ query }, ctx) => {
    return (await ctx.services.governance.get()).export(query.profile, ctx.principal ? actor(ctx) : null);
  }),
  on(postComplianceExport, async ({ body, query }, ctx) => (await ctx.services.governance.get()).export(body.profile ?? query.profile, ctx.principal ? actor(ctx) : null)),
  on(listComplianceEvidence, async (_i, ctx) => (await ctx.services.governance.get()).evidenceLog()),
];
