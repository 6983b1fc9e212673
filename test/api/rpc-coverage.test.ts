import { describe, expect, it } from 'vitest';
import { SPECS } from '../../api/index.js';
import { buildRpcContract } from '../../api/rpc-contract.js';
import { rpcBindings, type OperationSpec } from '../../api/spec.js';

/**
 * Every RPC of the reference's ControlCenter service that maps onto a route of ours must be served
 * under the same name and request message: the official gRPC clients call them by name
 * (docs/grpc.md). The list below is the reference implementation's service, proto 1.0.17, as the
 * API behaviour reference lists it in §13.2 (176 unary RPCs, grouped by request message), each
 * with the REST route it is the parity of (`null`: built in, not a route). A route of ours that carries no RPC of the list fails here; so does a
 * listed route that is missing from the contract, unless it is pending below.
 */
type Ref = [rpc: string, request: string, route: string | null];

const REFERENCE_RPCS: Ref[] = [
  // Empty
  ['Health', 'Empty', null],
  ['GetTenant', 'Empty', 'GET /v1/tenant'],
  ['GetDashboard', 'Empty', 'GET /v1/dashboard'],
  ['ListAuditMutations', 'Empty', 'GET /v1/audit/mutations'],
  ['ListDevices', 'Empty', 'GET /v1/devices'],
  ['ListFleetAgents', 'Empty', 'GET /v1/fleet/agents'],
  ['GetSreSummary', 'Empty', 'GET /v1/sre/summary'],
  ['ListSreIncidents', 'Empty', 'GET /v1/sre/incidents'],
  ['GetOpenApi', 'Empty', 'GET /v1/openapi.json'],
  ['GetHealthSummary', 'Empty', 'GET /v1/health/summary'],
  ['GetAssuranceSummary', 'Empty', 'GET /v1/assurance/summary'],
  ['GetDiagnosisSummary', 'Empty', 'GET /v1/diagnosis/summary'],
  ['GetExecutiveScorecard', 'Empty', 'GET /v1/executive/scorecard'],
  ['GetOtaStatus', 'Empty', 'GET /v1/ota/status'],
  ['GetOtlpMetrics', 'Empty', 'GET /v1/observability/otlp/metrics'],
  ['GetObservabilityBackend', 'Empty', 'GET /v1/observability/backend'],
  ['ListRobots', 'Empty', 'GET /v1/robots'],
  ['ListFleets', 'Empty', 'GET /v1/fleets'],
  ['ListAlerts', 'Empty', 'GET /v1/alerts'],
  ['ListConfigSnapshots', 'Empty', 'GET /v1/config/snapshots'],
  ['TestAlert', 'Empty', 'POST /v1/alerts/test'],
  ['GetDeviceTree', 'Empty', 'GET /v1/device-tree'],
  ['GetDeviceReports', 'Empty', 'GET /v1/device-reports'],
  ['GetFailoverChains', 'Empty', 'GET /v1/failover/chains'],
  ['ListSecrets', 'Empty', 'GET /v1/secrets'],
  ['GetRbacMatrix', 'Empty', 'GET /v1/rbac/matrix'],
  ['GetAnalyticsMissionRisk', 'Empty', 'GET /v1/analytics/mission-risk'],
  ['GetAnalyticsMissionTwin', 'Empty', 'GET /v1/analytics/mission-twin'],
  ['GetAnalyticsHumanTeaming', 'Empty', 'GET /v1/analytics/human-teaming'],
  ['GetObservabilityTraces', 'Empty', 'GET /v1/observability/traces'],
  ['GetOtlpTraces', 'Empty', 'GET /v1/observability/otlp/traces'],
  ['ListComplianceEvidence', 'Empty', 'GET /v1/compliance/evidence'],
  ['GetGovernance', 'Empty', 'GET /v1/governance'],
  ['GetCompliance', 'Empty', 'GET /v1/compliance'],
  ['ListCertifications', 'Empty', 'GET /v1/certifications'],
  ['ListDeploymentProfiles', 'Empty', 'GET /v1/deployment-profiles'],
  ['GetOperationalRisk', 'Empty', 'GET /v1/risk'],
  ['ListConfigApprovals', 'Empty', 'GET /v1/config/approvals'],
  ['ListEntities', 'Empty', 'GET /v1/entities'],
  ['GetEntityGraph', 'Empty', 'GET /v1/entities/graph'],
  ['SyncEntities', 'Empty', 'POST /v1/entities/sync'],
  ['GetSmartSpacesSummary', 'Empty', 'GET /v1/smart-spaces/summary'],
  ['ListFacilities', 'Empty', 'GET /v1/facilities'],
  ['ListEnergySystems', 'Empty', 'GET /v1/energy/systems'],
  ['GetEmergencyStatus', 'Empty', 'GET /v1/emergency/status'],
  ['ListRecoveryPlans', 'Empty', 'GET /v1/recovery/plans'],
  ['GetRecoveryHistory', 'Empty', 'GET /v1/recovery/history'],
  ['ListRecoveryPlaybooks', 'Empty', 'GET /v1/recovery/playbooks'],
  ['GetRecoveryMetrics', 'Empty', 'GET /v1/recovery/metrics'],
  ['ListRecoveryPolicies', 'Empty', 'GET /v1/recovery/policies'],
  ['ListRecoverableEntities', 'Empty', 'GET /v1/recovery/recoverable-entities'],
  ['GetMeshTopology', 'Empty', 'GET /v1/mesh/topology'],
  ['GetMeshNodes', 'Empty', 'GET /v1/mesh/nodes'],
  ['GetMeshPartitions', 'Empty', 'GET /v1/mesh/partitions'],
  ['GetMeshHealth', 'Empty', 'GET /v1/mesh/health'],
  ['GetMeshGraph', 'Empty', 'GET /v1/mesh/graph'],
  ['GetMeshMergeReport', 'Empty', 'GET /v1/mesh/merge-report'],
  ['ListAutonomyReflexes', 'Empty', 'GET /v1/autonomy/reflex'],
  ['ListAutonomyReflexTraces', 'Empty', 'GET /v1/autonomy/reflex/traces'],
  ['GetAutonomyHomeostasis', 'Empty', 'GET /v1/autonomy/homeostasis'],
  ['GetAutonomyImmunity', 'Empty', 'GET /v1/autonomy/immunity'],
  ['GetAutonomyAttention', 'Empty', 'GET /v1/autonomy/attention'],
  ['GetAutonomyFusion', 'Empty', 'GET /v1/autonomy/fusion'],
  ['GetAutonomyMemory', 'Empty', 'GET /v1/autonomy/memory'],
  ['ListAdminApiKeys', 'Empty', 'GET /v1/admin/api-keys'],
  ['ListAdminUsers', 'Empty', 'GET /v1/admin/users'],
  ['GetAdminIntegrations', 'Empty', 'GET /v1/admin/integrations'],
  ['GetAlertChannels', 'Empty', 'GET /v1/admin/alert-channels'],
  ['ListOperatorMissions', 'Empty', 'GET /v1/operator/missions'],
  ['ListOperatorMissionApprovals', 'Empty', 'GET /v1/operator/mission/approvals'],
  ['ListTwins', 'Empty', 'GET /v1/twins'],
  ['GetTwinUsage', 'Empty', 'GET /v1/twins/usage'],
  // DeviceIdRequest
  ['GetDevice', 'DeviceIdRequest', 'GET /v1/devices/{id}'],
  ['DeviceQuarantine', 'DeviceIdRequest', 'POST /v1/devices/{id}/quarantine'],
  ['DeviceTrust', 'DeviceIdRequest', 'POST /v1/devices/{id}/trust'],
  // DeviceBodyRequest
  ['PatchDevice', 'DeviceBodyRequest', 'PATCH /v1/devices/{id}'],
  ['DeviceProvision', 'DeviceBodyRequest', 'POST /v1/devices/{id}/provision'],
  ['DeviceAssign', 'DeviceBodyRequest', 'POST /v1/devices/{id}/assign'],
  // ReadinessRequest
  ['EvaluateReadiness', 'ReadinessRequest', 'POST /v1/readiness/run'],
  // JsonBodyRequest
  ['CreateSreIncident', 'JsonBodyRequest', 'POST /v1/sre/incidents'],
  ['RunDiscovery', 'JsonBodyRequest', 'POST /v1/devices/discover'],
  ['ProvisionDevice', 'JsonBodyRequest', 'POST /v1/provision'],
  ['PlanOta', 'JsonBodyRequest', 'POST /v1/ota/plan'],
  ['ExecuteOta', 'JsonBodyRequest', 'POST /v1/ota/execute'],
  ['SaveConfigSnapshot', 'JsonBodyRequest', 'POST /v1/config/snapshots'],
  ['OperatorQuarantine', 'JsonBodyRequest', 'POST /v1/operator/quarantine'],
  ['OperatorMissionApprove', 'JsonBodyRequest', 'POST /v1/operator/mission/approve'],
  ['CheckCompliance', 'JsonBodyRequest', 'POST /v1/compliance/check'],
  ['ValidateGovernance', 'JsonBodyRequest', 'POST /v1/governance/validate'],
  ['SubmitConfigApproval', 'JsonBodyRequest', 'POST /v1/config/approvals'],
  ['EvaluateProgramReadiness', 'JsonBodyRequest', 'POST /v1/programs/readiness'],
  ['EvaluateProgramAssure', 'JsonBodyRequest', 'POST /v1/programs/assure'],
  ['EvaluateProgramDiagnose', 'JsonBodyRequest', 'POST /v1/programs/diagnose'],
  ['EvaluateProgramHeal', 'JsonBodyRequest', 'POST /v1/programs/recovery/heal'],
  ['VerifyProgramHardware', 'JsonBodyRequest', 'POST /v1/programs/verify/hardware'],
  ['VerifyProgramCapabilities', 'JsonBodyRequest', 'POST /v1/programs/verify/capabilities'],
  ['VerifyProgramMission', 'JsonBodyRequest', 'POST /v1/programs/verify/mission'],
  ['RunProgramSimulation', 'JsonBodyRequest', 'POST /v1/programs/simulation'],
  ['ReplayProgram', 'JsonBodyRequest', 'POST /v1/programs/replay'],
  ['QueryEntities', 'JsonBodyRequest', 'POST /v1/entities/query'],
  ['RegisterEntity', 'JsonBodyRequest', 'POST /v1/entities/register'],
  ['RelateEntities', 'JsonBodyRequest', 'POST /v1/entities/relationships'],
  ['SimulateDecisions', 'JsonBodyRequest', 'POST /v1/decisions/simulate'],
  ['PlanRecovery', 'JsonBodyRequest', 'POST /v1/recovery/plan'],
  ['SimulateRecovery', 'JsonBodyRequest', 'POST /v1/recovery/simulate'],
  ['ExecuteRecovery', 'JsonBodyRequest', 'POST /v1/recovery/execute'],
  ['ValidateRecovery', 'JsonBodyRequest', 'POST /v1/recovery/validate'],
  ['ExplainRecovery', 'JsonBodyRequest', 'POST /v1/recovery/explain'],
  ['GetRecoveryPredictive', 'JsonBodyRequest', 'POST /v1/recovery/predictive'],
  ['RecommendRecovery', 'JsonBodyRequest', 'POST /v1/recovery/recommend'],
  ['DiscoverMesh', 'JsonBodyRequest', 'POST /v1/mesh/discover'],
  ['FindMeshCapability', 'JsonBodyRequest', 'POST /v1/mesh/find-capability'],
  ['SimulateMeshPartition', 'JsonBodyRequest', 'POST /v1/mesh/simulate-partition'],
  ['CreateAdminApiKey', 'JsonBodyRequest', 'POST /v1/admin/api-keys'],
  ['PatchAdminApiKey', 'JsonBodyRequest', 'PATCH /v1/admin/api-keys/{id}'],
  ['DeleteAdminApiKey', 'JsonBodyRequest', 'DELETE /v1/admin/api-keys/{id}'],
  ['CreateAdminUser', 'JsonBodyRequest', 'POST /v1/admin/users'],
  ['PatchAdminUser', 'JsonBodyRequest', 'PATCH /v1/admin/users/{id}'],
  ['DeleteAdminUser', 'JsonBodyRequest', 'DELETE /v1/admin/users/{id}'],
  ['UpdateAlertChannels', 'JsonBodyRequest', 'PUT /v1/admin/alert-channels'],
  ['OperatorMissionPause', 'JsonBodyRequest', 'POST /v1/operator/mission/pause'],
  ['OperatorMissionResume', 'JsonBodyRequest', 'POST /v1/operator/mission/resume'],
  ['OperatorMissionCancel', 'JsonBodyRequest', 'POST /v1/operator/mission/cancel'],
  ['ImportTwinReplay', 'JsonBodyRequest', 'POST /v1/twins/import-replay'],
  // IncidentBodyRequest
  ['AckSreIncident', 'IncidentBodyRequest', 'POST /v1/sre/incidents/{id}/ack'],
  // IncidentIdRequest
  ['ResolveSreIncident', 'IncidentIdRequest', 'POST /v1/sre/incidents/{id}/resolve'],
  // TrustPackageRequest
  ['GetTrustPackage', 'TrustPackageRequest', 'GET /v1/trust/package'],
  // DriftRequest
  ['DetectDrift', 'DriftRequest', 'GET /v1/drift'],
  // QueryRequest
  ['QueryDigitalThread', 'QueryRequest', 'GET /v1/digital-thread/query'],
  ['DiscoverDevices', 'QueryRequest', 'GET /v1/discovery'],
  ['GetAnalyticsReadiness', 'QueryRequest', 'GET /v1/analytics/readiness'],
  ['GetAnalyticsWhatIf', 'QueryRequest', 'GET /v1/analytics/what-if'],
  ['GetAnalyticsReadinessForecast', 'QueryRequest', 'GET /v1/analytics/readiness-forecast'],
  ['GetAnalyticsTrustGraph', 'QueryRequest', 'GET /v1/analytics/trust-graph'],
  ['GetAnalyticsCertificationPack', 'QueryRequest', 'GET /v1/analytics/certification-pack'],
  ['GetAnalyticsTimeTravel', 'QueryRequest', 'GET /v1/analytics/time-travel'],
  ['GetAnalyticsGovernance', 'QueryRequest', 'GET /v1/analytics/governance'],
  ['ExportReports', 'QueryRequest', 'GET /v1/reports/export'],
  ['ExportOtlpTraces', 'QueryRequest', 'POST /v1/observability/otlp/export'],
  ['ExportOtlpMetrics', 'QueryRequest', 'POST /v1/observability/otlp/export-metrics'],
  ['ExportCompliance', 'QueryRequest', 'GET /v1/compliance/export'],
  ['GetDeploymentProfile', 'QueryRequest', 'GET /v1/deployment-profiles'],
  ['GetProgramSource', 'QueryRequest', 'GET /v1/programs/source'],
  ['GetTrustProgram', 'QueryRequest', 'GET /v1/trust/program'],
  ['GetEntityTraceability', 'QueryRequest', 'GET /v1/entities/traceability'],
  ['ListSmartSpacesDevices', 'QueryRequest', 'GET /v1/smart-spaces/devices'],
  ['ListSmartSpacesGateways', 'QueryRequest', 'GET /v1/smart-spaces/gateways'],
  ['ListDecisions', 'QueryRequest', 'GET /v1/decisions'],
  ['ListDecisionPolicies', 'QueryRequest', 'GET /v1/decision-policies'],
  ['ListDecisionTraces', 'QueryRequest', 'GET /v1/decisions/traces'],
  ['ListDecisionPolicyCache', 'QueryRequest', 'GET /v1/decision-policy-cache'],
  ['GetRecoveryGraph', 'QueryRequest', 'GET /v1/recovery/graph'],
  ['GetMeshRoutes', 'QueryRequest', 'GET /v1/mesh/routes'],
  ['ListProgramTraces', 'QueryRequest', 'GET /v1/programs/traces'],
  ['SyncTwin', 'QueryRequest', 'POST /v1/twins/sync'],
  // ApprovalBodyRequest
  ['ApproveConfigApproval', 'ApprovalBodyRequest', 'POST /v1/config/approvals/{id}/approve'],
  ['RejectConfigApproval', 'ApprovalBodyRequest', 'POST /v1/config/approvals/{id}/reject'],
  // EntityIdRequest
  ['GetEntity', 'EntityIdRequest', 'GET /v1/entities/{id}'],
  ['GetEntityHealth', 'EntityIdRequest', 'GET /v1/entities/{id}/health'],
  ['GetEntityTrust', 'EntityIdRequest', 'GET /v1/entities/{id}/trust'],
  ['GetEntityRelationships', 'EntityIdRequest', 'GET /v1/entities/{id}/relationships'],
  ['GetEntityReadiness', 'EntityIdRequest', 'GET /v1/entities/{id}/readiness'],
  ['GetFacilityReadiness', 'EntityIdRequest', 'GET /v1/facilities/{id}/readiness'],
  ['GetZoneOccupancy', 'EntityIdRequest', 'GET /v1/zones/{id}/occupancy'],
  ['GetFacilityHealth', 'EntityIdRequest', 'GET /v1/facilities/{id}/health'],
  ['GetFacilitySecurity', 'EntityIdRequest', 'GET /v1/facilities/{id}/security'],
  ['GetFacilityFloorMap', 'EntityIdRequest', 'GET /v1/facilities/{id}/floor-map'],
  ['GetZoneEnvironment', 'EntityIdRequest', 'GET /v1/zones/{id}/environment'],
  ['GetEnergySystem', 'EntityIdRequest', 'GET /v1/energy/systems/{id}'],
  ['GetEntityDecisions', 'EntityIdRequest', 'GET /v1/entities/{id}/decisions'],
  ['GetEntityAutonomy', 'EntityIdRequest', 'GET /v1/entities/{id}/autonomy'],
  ['GetTwin', 'EntityIdRequest', 'GET /v1/twins/{id}'],
  ['GetTwinHistory', 'EntityIdRequest', 'GET /v1/twins/{id}/history'],
  // EntityBodyRequest
  ['VerifyEntity', 'EntityBodyRequest', 'POST /v1/entities/{id}/verify'],
  ['TagEntity', 'EntityBodyRequest', 'POST /v1/entities/{id}/tags'],
  ['PushTwinSnapshot', 'EntityBodyRequest', 'POST /v1/twins/{id}/snapshots'],
];

/** `GET /v1/twins/{id}` and `GET /v1/twins/{twin_id}` are the same route. */
const routeKey = (method: string, path: string) => `${method} ${path.replace(/\{[^}]+\}/g, '{}')}`;
const byRoute = new Map<string, OperationSpec>(SPECS.map((s) => [routeKey(s.method, s.path), s]));
const specOf = (route: string): OperationSpec | undefined => {
  const [method, path] = route.split(' ') as [string, string];
  return byRoute.get(routeKey(method, path));
};

describe('reference gRPC names in the contract', () => {
  it('the fixture is the reference service: 176 RPCs, per request message as documented', () => {
    expect(REFERENCE_RPCS).toHaveLength(176);
    expect(new Set(REFERENCE_RPCS.map((r) => r[0])).size).toBe(176);
    const perKind: Record<string, number> = {};
    for (const [, kind] of REFERENCE_RPCS) perKind[kind] = (perKind[kind] ?? 0) + 1;
    expect(perKind).toEqual({
      Empty: 72,
      DeviceIdRequest: 3,
      DeviceBodyRequest: 3,
      ReadinessRequest: 1,
      JsonBodyRequest: 45,
      IncidentBodyRequest: 1,
      IncidentIdRequest: 1,
      TrustPackageRequest: 1,
      DriftRequest: 1,
      QueryRequest: 27,
      ApprovalBodyRequest: 2,
      EntityIdRequest: 16,
      EntityBodyRequest: 3,
    });
  });

  it('Health is built into the service', () => {
    expect(buildRpcContract(SPECS).rpcs.find((r) => r.name === 'Health')).toMatchObject({ request: 'Empty', response: 'HealthResponse' });
  });

  const routed = REFERENCE_RPCS.filter((r): r is [string, string, string] => r[2] !== null);
  it.each(routed)('%s (%s) is served on %s', (rpc, request, route) => {
    const spec = specOf(route);
    expect(spec, `${route} (RPC ${rpc}) is missing from the contract`).toBeDefined();
    const binding = rpcBindings(spec!).find((b) => b.rpc!.name === rpc);
    expect(binding, `${route} exists (${spec!.id}) but does not serve RPC ${rpc}`).toBeDefined();
    expect(binding!.rpc!.request).toBe(request);
  });
});
