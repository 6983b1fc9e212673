import { describe, expect, it } from 'vitest';
import { SPECS } from '../../api/index.js';
import { rpcBindings } from '../../api/spec.js';

/**
 * The 38 fleet-operation routes and their gRPC names (docs/operations.md; issue 15): each must be in
 * the contract with the RPC the official gRPC clients call by name. A route dropped or renamed
 * fails here before a client notices.
 */
const FLEET_OPERATIONS: Array<[method: string, path: string, rpc: string | null]> = [
  ['GET', '/v1/admin/alert-channels', 'GetAlertChannels'],
  ['PUT', '/v1/admin/alert-channels', 'UpdateAlertChannels'],
  ['GET', '/v1/admin/integrations', 'GetAdminIntegrations'],
  ['GET', '/v1/admin/slack', null],
  ['POST', '/v1/admin/slack', null],
  ['POST', '/v1/admin/slack/oauth-url', null],
  ['POST', '/v1/admin/slack/oauth/callback', null],
  ['GET', '/v1/config/approvals', 'ListConfigApprovals'],
  ['POST', '/v1/config/approvals', 'SubmitConfigApproval'],
  ['POST', '/v1/config/approvals/{id}/approve', 'ApproveConfigApproval'],
  ['POST', '/v1/config/approvals/{id}/reject', 'RejectConfigApproval'],
  ['GET', '/v1/config/history', null],
  ['GET', '/v1/config/snapshots', 'ListConfigSnapshots'],
  ['POST', '/v1/config/snapshots', 'SaveConfigSnapshot'],
  ['GET', '/v1/deploy/gate', null],
  ['GET', '/v1/deployment-profiles', 'ListDeploymentProfiles'],
  ['POST', '/v1/deployment/verify', null],
  ['GET', '/v1/digital-thread/query', 'QueryDigitalThread'],
  ['GET', '/v1/drift', 'DetectDrift'],
  ['GET', '/v1/drift/scans', null],
  ['POST', '/v1/drift/scan', null],
  ['GET', '/v1/executive/scorecard', 'GetExecutiveScorecard'],
  ['GET', '/v1/health/summary', 'GetHealthSummary'],
  ['GET', '/v1/observability/backend', 'GetObservabilityBackend'],
  ['GET', '/v1/observability/otlp/metrics', 'GetOtlpMetrics'],
  ['GET', '/v1/observability/otlp/traces', 'GetOtlpTraces'],
  ['GET', '/v1/observability/traces', 'GetObservabilityTraces'],
  ['POST', '/v1/observability/otlp/export', 'ExportOtlpTraces'],
  ['POST', '/v1/observability/otlp/export-metrics', 'ExportOtlpMetrics'],
  ['GET', '/v1/ota/status', 'GetOtaStatus'],
  ['POST', '/v1/ota/plan', 'PlanOta'],
  ['POST', '/v1/ota/execute', 'ExecuteOta'],
  ['GET', '/v1/reports/export', 'ExportReports'],
  ['GET', '/v1/reports/schedules', null],
  ['POST', '/v1/reports/schedules', null],
  ['GET', '/v1/secrets', 'ListSecrets'],
  ['GET', '/v1/sre/summary', 'GetSreSummary'],
  ['POST', '/v1/integrations/pagerduty/webhook', null],
];

describe('fleet operations in the contract', () => {
  it('lists 38 routes', () => expect(FLEET_OPERATIONS).toHaveLength(38));

  it.each(FLEET_OPERATIONS)('%s %s is specified with its RPC', (method, path, rpc) => {
    const spec = SPECS.find((s) => s.method === method && s.path === path);
    expect(spec, `${method} ${path} missing from api/index.ts#SPECS`).toBeDefined();
    if (rpc) expect(spec!.rpc?.name).toBe(rpc);
  });

  it('the RPC names the reference clients call by name exist', () => {
    const names = new Set(SPECS.flatMap((s) => rpcBindings(s).map((b) => b.rpc!.name)));
    // Second RPC of the profiles route (detail by name) and the alert channel JSON-RPC methods.
    for (const rpc of ['GetDeploymentProfile', 'GetAlertChannels', 'UpdateAlertChannels', 'GetAdminIntegrations']) expect(names.has(rpc), rpc).toBe(true);
  });
});
