import * as z from 'zod';
import { defineSpec } from '../spec.js';

const missionBody = z.lazy(() =>
  z.object({
    mission_id: z.string().min(1, 'missing mission_id').max(200),
    note: z.string().max(1000).optional(),
  }),
);
const approveBody = z.lazy(() =>
  z.object({
    mission_id: z.string().min(1, 'missing mission_id').max(200),
    approval_id: z.string().min(1).max(200).optional(),
    /** Omitted means reject (the reference's default, kept for client compatibility). */
    approved: z.boolean().optional(),
    note: z.string().max(1000).optional(),
  }),
);
const quarantineBody = z.lazy(() =>
  z.object({
    device_id: z.string().min(1, 'missing device_id').max(200),
    reason: z.string().max(500).optional(),
  }),
);

type MissionBody = z.infer<typeof missionBody>;

/** The operator console's direct controls (docs/operator.md): missions, approvals, quarantine, fleet agents. */
export const listOperatorMissions = defineSpec({
  id: 'listOperatorMissions',
  group: 'operator',
  summary: 'Missions of the entity registry with their lifecycle state, and the pending approvals',
  method: 'GET',
  path: '/v1/operator/missions',
  access: { kind: 'sensitive-read' },
  rpc: { name: 'ListOperatorMissions', request: 'Empty' },
  jsonRpc: true,
  cli: ['operator', 'missions'],
});

export const pauseOperatorMission = defineSpec<MissionBody>({
  id: 'pauseOperatorMission',
  group: 'operator',
  summary: 'Pause a running mission (409 when the mission lifecycle does not allow it)',
  method: 'POST',
  path: '/v1/operator/mission/pause',
  access: { kind: 'action', action: 'Operate' },
  rpc: { name: 'OperatorMissionPause', request: 'JsonBodyRequest' },
  jsonRpc: true,
  cli: ['operator', 'pause'],
  body: missionBody,
});

export const resumeOperatorMission = defineSpec<MissionBody>({
  id: 'resumeOperatorMission',
  group: 'operator',
  summary: 'Start or resume a mission (409 after cancel, or while awaiting approval)',
  method: 'POST',
  path: '/v1/operator/mission/resume',
  access: { kind: 'action', action: 'Operate' },
  rpc: { name: 'OperatorMissionResume', request: 'JsonBodyRequest' },
  jsonRpc: true,
  cli: ['operator', 'resume'],
  body: missionBody,
});

export const cancelOperatorMission = defineSpec<MissionBody>({
  id: 'cancelOperatorMission',
  group: 'operator',
  summary: 'Cancel (abort) a mission; cancelled is final',
  method: 'POST',
  path: '/v1/operator/mission/cancel',
  access: { kind: 'action', action: 'Shutdown' },
  rpc: { name: 'OperatorMissionCancel', request: 'JsonBodyRequest' },
  jsonRpc: true,
  cli: ['operator', 'cancel'],
  body: missionBody,
});

export const listOperatorMissionApprovals = defineSpec({
  id: 'listOperatorMissionApprovals',
  group: 'operator',
  summary: 'The mission approval queue (configuration seeds merged at load)',
  method: 'GET',
  path: '/v1/operator/mission/approvals',
  access: { kind: 'sensitive-read' },
  rpc: { name: 'ListOperatorMissionApprovals', request: 'Empty' },
  jsonRpc: true,
  cli: ['operator', 'approvals'],
});

export const approveOperatorMission = defineSpec<z.infer<typeof approveBody>>({
  id: 'approveOperatorMission',
  group: 'operator',
  summary: 'Approve or reject a mission awaiting sign-off (409 when already resolved)',
  method: 'POST',
  path: '/v1/operator/mission/approve',
  access: { kind: 'action', action: 'Approve' },
  rpc: { name: 'OperatorMissionApprove', request: 'JsonBodyRequest' },
  jsonRpc: true,
  cli: ['operator', 'approve'],
  body: approveBody,
});

export const operatorQuarantine = defineSpec<z.infer<typeof quarantineBody>>({
  id: 'operatorQuarantine',
  group: 'operator',
  summary: 'Take a device out of service (device lifecycle transition to quarantined, persisted)',
  method: 'POST',
  path: '/v1/operator/quarantine',
  access: { kind: 'action', action: 'Operate' },
  rpc: { name: 'OperatorQuarantine', request: 'JsonBodyRequest' },
  jsonRpc: true,
  cli: ['operator', 'quarantine'],
  body: quarantineBody,
});

export const listFleetAgents = defineSpec({
  id: 'listFleetAgents',
  group: 'operator',
  summary: 'Registered fleet agent endpoints (never their tokens: token_set instead)',
  method: 'GET',
  path: '/v1/fleet/agents',
  access: { kind: 'sensitive-read' },
  rpc: { name: 'ListFleetAgents', request: 'Empty' },
  jsonRpc: true,
  cli: ['fleet', 'agents'],
});

const continuityQuery = z.lazy(() =>
  z.object({
    /** Evaluate every failed robot under this trigger instead of the one its live state suggests. */
    trigger: z.string().min(1).max(200).optional(),
  }),
);

/**
 * Fleet continuity (docs/operator.md § Fleet continuity): which robot took over whose mission, from
 * the program's continuity declarations (docs/program-language.md §30), the fleet agents' live
 * `GET /v1/status` and the missions' state in the entity registry.
 */
export const getContinuityStatus = defineSpec<Record<string, never>, z.infer<typeof continuityQuery>>({
  id: 'getContinuityStatus',
  group: 'operator',
  summary: 'Fleet continuity: failed robots, the robot that takes over each mission, and the continuity rule behind it',
  method: 'GET',
  path: '/v1/continuity/status',
  access: { kind: 'sensitive-read' },
  rpc: { name: 'GetContinuityStatus', request: 'QueryRequest' },
  cli: ['fleet', 'continuity'],
  query: continuityQuery,
});

export const operatorSpecs = [
  listOperatorMissions,
  pauseOperatorMission,
  resumeOperatorMission,
  cancelOperatorMission,
  listOperatorMissionApprovals,
  approveOperatorMission,
  operatorQuarantine,
  listFleetAgents,
  getContinuityStatus,
];
