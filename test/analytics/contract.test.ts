import { describe, expect, it } from 'vitest';
import { SPECS } from '../../api/index.js';

/** Routes #19–#28 of the area: public GETs with the gRPC names and request messages the official clients call. */
const ANALYTICS: Array<[path: string, rpc: string, request: 'QueryRequest' | 'Empty']> = [
  ['/v1/analytics/readiness', 'GetAnalyticsReadiness', 'QueryRequest'],
  ['/v1/analytics/readiness-forecast', 'GetAnalyticsReadinessForecast', 'QueryRequest'],
  ['/v1/analytics/what-if', 'GetAnalyticsWhatIf', 'QueryRequest'],
  ['/v1/analytics/mission-risk', 'GetAnalyticsMissionRisk', 'Empty'],
  ['/v1/analytics/trust-graph', 'GetAnalyticsTrustGraph', 'QueryRequest'],
  ['/v1/analytics/mission-twin', 'GetAnalyticsMissionTwin', 'Empty'],
  ['/v1/analytics/certification-pack', 'GetAnalyticsCertificationPack', 'QueryRequest'],
  ['/v1/analytics/time-travel', 'GetAnalyticsTimeTravel', 'QueryRequest'],
  ['/v1/analytics/human-teaming', 'GetAnalyticsHumanTeaming', 'Empty'],
  ['/v1/analytics/governance', 'GetAnalyticsGovernance', 'QueryRequest'],
];

describe('program analytics in the contract', () => {
  it.each(ANALYTICS)('GET %s is an open read with %s(%s)', (path, rpc, request) => {
    const spec = SPECS.find((s) => s.method === 'GET' && s.path === path);
    expect(spec, `GET ${path} missing from api/index.ts#SPECS`).toBeDefined();
    expect(spec!.access).toEqual({ kind: 'read' });
    expect(spec!.rpc).toEqual({ name: rpc, request });
  });

  it('no other analytics route exists', () => {
    expect(SPECS.filter((s) => s.path.startsWith('/v1/analytics/')).map((s) => s.path).sort()).toEqual(ANALYTICS.map((a) => a[0]).sort());
  });
});

describe('read-auth policy on the analytics routes', () => {
  it('open by default; SVC_API_REQUIRE_AUTH_ALL_READS asks for a principal (401 without, 200 with any key)', async () => {
    const fs = await import('node:fs');
    const path = await import('node:path');
    const { demoProject, startAnalyticsAgent } = await import('./fixture.js');
    const { tempDir } = await import('../helpers/agent-harness.js');
    const p = demoProject();
    // One state directory: the keys file is hashed on first start with a pepper tied to it.
    const stateDir = tempDir('svc-analytics-auth-');
    const keys = path.join(p.root, 'keys.json');
    fs.writeFileSync(keys, JSON.stringify([{ key_id: 'guest', token: 'analytics-guest-key-0123456789', role: 'guest' }]));
    const open = await startAnalyticsAgent({ config: p.config, program: p.program, stateDir, env: { SVC_API_KEYS_FILE: keys, SVC_API_REQUIRE_AUTH_READS: '1' } });
    try {
      // Lazy: nothing of analytics is loaded until the first request.
      expect(open.agent.services.analytics.loaded()).toBeNull();
      expect((await open.json('/v1/analytics/mission-twin')).status).toBe(200);
      expect(open.agent.services.analytics.loaded()).not.toBeNull();
    } finally {
      await open.close();
    }
    const closed = await startAnalyticsAgent({ config: p.config, program: p.program, stateDir, env: { SVC_API_KEYS_FILE: keys, SVC_API_REQUIRE_AUTH_ALL_READS: '1' } });
    try {
      const anonymous = await closed.json('/v1/analytics/mission-twin');
      expect(anonymous.status).toBe(401);
      const guest = await closed.json('/v1/analytics/mission-twin', { headers: { authorization: 'Bearer analytics-guest-key-0123456789' } });
      expect(guest.status).toBe(200);
      expect(guest.body.mission_twin.state.robots).toEqual(['Sentinel']);
    } finally {
      await closed.close();
    }
  });
});
