import * as z from 'zod';
import { defineSpec } from '../spec.js';

/** What `GET /v1/config/snapshots` lists of a snapshot; a wire shape, shared by the agent and the panel. */
export interface SnapshotMeta {
  id: string;
  created_at_ms: number;
  label?: string;
  project_name: string;
  device_count: number;
  encrypted: boolean;
}

export type ConfigApprovalStatus = 'pending' | 'approved' | 'rejected';

export interface ConfigApprovalVote {
  approver: string;
  approved_at_ms: number;
  note?: string;
}

/** A request in the approval queue (`GET /v1/config/approvals`). */
export interface ConfigApprovalRequest {
  id: string;
  snapshot_id: string;
  requester: string;
  status: ConfigApprovalStatus;
  created_at_ms: number;
  required_approvals: number;
  approvals: ConfigApprovalVote[];
  resolved_at_ms?: number;
  resolver?: string;
  note?: string;
}

/**
 * Configuration under control (docs/operations.md § Configuration snapshots and approvals, § Drift):
 * immutable snapshots of the resolved configuration (optionally AES-256-GCM encrypted), approval
 * requests that publish a snapshot once a quorum of distinct approvers agreed, the change history,
 * and drift between a snapshot and the live configuration, program and agents.
 */

// A `label` that is not a string, or an `encrypt` that is not a boolean, is ignored rather than refused
// (clients of the earlier implementation send either loosely).
const snapshotBody = z.lazy(() =>
  z.object({
    label: z.string().max(200).optional().catch(undefined),
    encrypt: z.boolean().optional().catch(undefined),
  }),
);
const approvalBody = z.lazy(() =>
  z.object({
    snapshot_id: z.string().min(1, 'missing snapshot_id').max(200),
    note: z.string().max(2000).optional(),
    required_approvals: z.number().int().min(0).max(100).optional(),
  }),
);
const voteBody = z.lazy(() => z.object({ note: z.string().max(2000).optional() }));
const driftQuery = z.lazy(() => z.object({ baseline_id: z.string().max(200).optional() }));
const scanBody = z.lazy(() => z.object({ baseline_id: z.string().max(200).optional() }));

export type SnapshotBody = z.infer<typeof snapshotBody>;
export type ConfigApprovalBody = z.infer<typeof approvalBody>;
export type ConfigVoteBody = z.infer<typeof voteBody>;

export const listConfigSnapshots = defineSpec({
  id: 'listConfigSnapshots',
  group: 'config',
  summary: 'Configuration snapshots, newest first (encrypted ones only when the key is configured)',
  method: 'GET',
  path: '/v1/config/snapshots',
  access: { kind: 'sensitive-read' },
  rpc: { name: 'ListConfigSnapshots', request: 'Empty' },
  cli: ['config', 'snapshots'],
});

export const saveConfigSnapshot = defineSpec<SnapshotBody>({
  id: 'saveConfigSnapshot',
  group: 'config',
  summary: 'Freeze the resolved configuration and the device pool as an immutable snapshot (encrypt: AES-256-GCM)',
  method: 'POST',
  path: '/v1/config/snapshots',
  access: { kind: 'action', action: 'Deploy' },
  rpc: { name: 'SaveConfigSnapshot', request: 'JsonBodyRequest' },
  cli: ['config', 'snapshot'],
  body: snapshotBody,
});

export const getConfigHistory = defineSpec({
  id: 'getConfigHistory',
  group: 'config',
  summary: 'Configuration changes, newest first: snapshots and the audited /v1/config mutations',
  method: 'GET',
  path: '/v1/config/history',
  access: { kind: 'sensitive-read' },
  cli: ['config', 'history'],
});

export const listConfigApprovals = defineSpec({
  id: 'listConfigApprovals',
  group: 'config',
  summary: 'Configuration approval requests, oldest first',
  method: 'GET',
  path: '/v1/config/approvals',
  access: { kind: 'sensitive-read' },
  rpc: { name: 'ListConfigApprovals', request: 'Empty' },
  cli: ['config', 'approvals'],
});

export const submitConfigApproval = defineSpec<ConfigApprovalBody>({
  id: 'submitConfigApproval',
  group: 'config',
  summary: 'Ask for a snapshot to be published; it needs required_approvals distinct approvers',
  method: 'POST',
  path: '/v1/config/approvals',
  access: { kind: 'action', action: 'Deploy' },
  rpc: { name: 'SubmitConfigApproval', request: 'JsonBodyRequest' },
  cli: ['config', 'submit'],
  cliArgs: ['snapshot_id'],
  body: approvalBody,
});

export const approveConfigApproval = defineSpec<ConfigVoteBody>({
  id: 'approveConfigApproval',
  group: 'config',
  summary: 'Vote for a pending request; the vote that meets the quorum publishes the snapshot',
  method: 'POST',
  path: '/v1/config/approvals/{id}/approve',
  access: { kind: 'action', action: 'Approve' },
  rpc: { name: 'ApproveConfigApproval', request: 'ApprovalBodyRequest' },
  cli: ['config', 'approve'],
  body: voteBody,
});

export const rejectConfigApproval = defineSpec<ConfigVoteBody>({
  id: 'rejectConfigApproval',
  group: 'config',
  summary: 'Reject a pending request (final)',
  method: 'POST',
  path: '/v1/config/approvals/{id}/reject',
  access: { kind: 'action', action: 'Approve' },
  rpc: { name: 'RejectConfigApproval', request: 'ApprovalBodyRequest' },
  cli: ['config', 'reject'],
  body: voteBody,
});

export const detectDrift = defineSpec<Record<string, never>, z.infer<typeof driftQuery>>({
  id: 'detectDrift',
  group: 'drift',
  summary: 'Drift of the live configuration, program and agents from a baseline snapshot (nothing recorded)',
  method: 'GET',
  path: '/v1/drift',
  access: { kind: 'sensitive-read' },
  rpc: { name: 'DetectDrift', request: 'DriftRequest' },
  cli: ['drift', 'detect'],
  cliArgs: ['baseline_id'],
  query: driftQuery,
});

export const listDriftScans = defineSpec({
  id: 'listDriftScans',
  group: 'drift',
  summary: 'Recorded drift scans, oldest first (a ring of 200)',
  method: 'GET',
  path: '/v1/drift/scans',
  access: { kind: 'sensitive-read' },
  cli: ['drift', 'scans'],
});

export const runDriftScan = defineSpec<z.infer<typeof scanBody>>({
  id: 'runDriftScan',
  group: 'drift',
  summary: 'Scan for drift against a baseline (else SVC_DRIFT_SCAN_BASELINE_ID, else the newest snapshot), record it, alert when it failed',
  method: 'POST',
  path: '/v1/drift/scan',
  access: { kind: 'action', action: 'Operate' },
  cli: ['drift', 'scan'],
  cliArgs: ['baseline_id'],
  body: scanBody,
});

export const configControlSpecs = [
  listConfigSnapshots,
  saveConfigSnapshot,
  getConfigHistory,
  listConfigApprovals,
  submitConfigApproval,
  approveConfigApproval,
  rejectConfigApproval,
  detectDrift,
  listDriftScans,
  runDriftScan,
];
