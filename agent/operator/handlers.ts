import {
  approveOperatorMission,
  cancelOperatorMission,
  listFleetAgents,
  listOperatorMissionApprovals,
  listOperatorMissions,
  operatorQuarantine,
  pauseOperatorMission,
  resumeOperatorMission,
} from '../../api/domains/operator.js';
import { handlersFor } from '../core/handlers.js';
import type { CallContext } from '../core/operation.js';
import type { OperatorActor } from './operator-service.js';

const on = handlersFor(['operator']);

/** The principal behind the call: its key id, the user when there is one, its role. */
const actor = (ctx: Pick<CallContext, 'principal'>): OperatorActor => ({
  key_id: ctx.principal?.key_id ?? 'anonymous',
  user_id: ctx.principal?.user_id ?? null,
  role: ctx.principal?.role ?? null,
});

/** Operator missions, approvals, quarantine and fleet agents over the operator service (docs/operator.md). */
export const operatorHandlers = [
  on(listOperatorMissions, (_i, ctx) => ctx.services.operator.listMissions()),
  on(pauseOperatorMission, ({ body }, ctx) => ctx.services.operator.pauseMission(body.mission_id, actor(ctx), body.note)),
  on(resumeOperatorMission, ({ body }, ctx) => ctx.services.operator.resumeMission(body.mission_id, actor(ctx), body.note)),
  on(cancelOperatorMission, ({ body }, ctx) => ctx.services.operator.cancelMission(body.mission_id, actor(ctx), body.note)),
  on(listOperatorMissionApprovals, (_i, ctx) => ctx.services.operator.listApprovals()),
  on(approveOperatorMission, ({ body }, ctx) => ctx.services.operator.approve(body, actor(ctx))),
  on(operatorQuarantine, ({ body }, ctx) => ctx.services.operator.quarantine(body.device_id, body.reason ?? null, actor(ctx))),
  on(listFleetAgents, (_i, ctx) => ctx.services.operator.fleetAgents()),
];
