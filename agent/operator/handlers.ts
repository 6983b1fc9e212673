import {
  approveOperatorMission,
  cancelOperatorMission,
  getContinuityStatus,
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
const onContinuity = handlersFor(['operator', 'programs', 'devices', 'outbound']);

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
  onContinuity(getContinuityStatus, async ({ query }, ctx) => {
    const s = ctx.services;
    // The evaluation loads the program parser: a separate chunk, loaded on the first call.
    const { continuityStatus } = await import('./continuity-status.js');
    return continuityStatus({
      programPath: s.programs.workspace.programPath,
      agents: s.operator.storedFleetAgents(),
      devices: s.devices.list(),
      missions: await s.operator.missionStates(),
      // A panel polls this: a silent agent counts as unreachable after 5 s, not the client's 30 s default.
      probe: (agent) =>
        s.outbound.getJson(`${agent.url.replace(/\/+$/, '')}/v1/status`, { bearer: agent.token ?? null, connectTimeoutMs: 3000, totalTimeoutMs: 5000 }),
      trigger: query.trigger,
    });
  }),
];
