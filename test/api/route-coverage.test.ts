import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SPECS } from '../../api/index.js';
import { STREAM_PATHS } from '../../api/stream-paths.js';
import { startAgent, type RunningAgent } from '../helpers/agent-harness.js';

/**
 * Route coverage: every route the service specification names is served. The specification's list
 * is carried as a checked-in fixture (test/fixtures/spec-routes.json, transcribed from the
 * specification's "Endpoints" section; test/fixtures/README.md says how), and checked against the
 * contract (api/index.ts SPECS), the stream paths and the pipeline's fixed pages.
 */
interface SpecRoute {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'WS' | null;
  path: string;
  match?: 'prefix' | 'subpath';
  served_by?: 'websocket' | 'pipeline';
  note?: string;
  from: string;
}

const FIXTURE = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, '..', 'fixtures', 'spec-routes.json'), 'utf8')) as { source: string; routes: SpecRoute[] };

/**
 * The 67 governance, compliance, analytics, twins, smart-spaces, people, HRI and plugin routes
 * (docs/governance.md, analytics.md, twins.md, spaces.md, people.md, plugins.md): each with its exact
 * method, since the specification's prose names several of them without one.
 */
const GOVERNANCE_AND_SPACES: readonly string[] = [
  'GET /v1/governance',
  'POST /v1/governance/validate',
  'GET /v1/compliance',
  'POST /v1/compliance/check',
  'GET /v1/certifications',
  'GET /v1/certifications/report',
  'GET /v1/risk',
  'GET /v1/governance/policies',
  'POST /v1/governance/policies/assign',
  'POST /v1/governance/policies/detach',
  'GET /v1/governance/audit',
  'GET /v1/governance/accountability',
  'PUT /v1/governance/accountability',
  'POST /v1/governance/accountability',
  'GET /v1/compliance/profiles',
  'GET /v1/compliance/export',
  'POST /v1/compliance/export',
  'GET /v1/compliance/evidence',
  'GET /v1/analytics/readiness',
  'GET /v1/analytics/readiness-forecast',
  'GET /v1/analytics/what-if',
  'GET /v1/analytics/mission-risk',
  'GET /v1/analytics/trust-graph',
  'GET /v1/analytics/mission-twin',
  'GET /v1/analytics/certification-pack',
  'GET /v1/analytics/time-travel',
  'GET /v1/analytics/human-teaming',
  'GET /v1/analytics/governance',
  'GET /v1/twins',
  'GET /v1/twins/usage',
  'GET /v1/twins/{id}',
  'GET /v1/twins/{id}/history',
  'POST /v1/twins/sync',
  'POST /v1/twins/{id}/snapshots',
  'POST /v1/twins/import-replay',
  'GET /v1/facilities',
  'GET /v1/facilities/{id}/readiness',
  'GET /v1/facilities/{id}/health',
  'GET /v1/facilities/{id}/security',
  'GET /v1/facilities/{id}/floor-map',
  'GET /v1/zones/{id}/occupancy',
  'GET /v1/zones/{id}/environment',
  'GET /v1/energy/systems',
  'GET /v1/energy/systems/{id}',
  'GET /v1/emergency/status',
  'GET /v1/smart-spaces/summary',
  'GET /v1/smart-spaces/devices',
  'GET /v1/smart-spaces/gateways',
  'GET /v1/humans',
  'GET /v1/humans/readiness',
  'GET /v1/humans/{id}/readiness',
  'GET /v1/humans/twins',
  'GET /v1/wearables',
  'GET /v1/human-health/policy',
  'GET /v1/hri/sessions',
  'POST /v1/hri/sessions',
  'POST /v1/hri/sessions/{id}/annotate',
  'GET /v1/hri/sessions/{id}/replay',
  'GET /v1/hri/collaboration',
  'GET /v1/hri/context',
  'GET /v1/plugins',
  'GET /v1/plugins/control-center',
  'GET /v1/plugins/control-center/{name}/bundle',
  'GET /v1/plugins/search',
  'POST /v1/plugins/install',
  'POST /v1/plugins/{name}/enable',
  'POST /v1/plugins/{name}/disable',
];

/** Path parameters match whatever their name: `{id}` = `{name}` = `{plugin}`. */
const norm = (p: string) => p.replace(/\{[^}]+\}/g, '{}');
const label = (r: SpecRoute) => `${r.method ?? 'ANY'} ${r.path}`;

function servedByContract(r: SpecRoute): boolean {
  if (r.match === 'prefix') {
    const base = r.path.replace(/\*$/, '');
    return SPECS.some((s) => s.path.startsWith(base));
  }
  if (r.match === 'subpath') {
    const [base, tail] = r.path.split('*') as [string, string];
    return SPECS.some((s) => s.path.startsWith(base) && s.path.endsWith(tail) && s.path.length > base.length + tail.length);
  }
  return SPECS.some((s) => norm(s.path) === norm(r.path) && (r.method === null || s.method === r.method));
}

const contractRoutes = FIXTURE.routes.filter((r) => r.served_by === undefined);

describe('route coverage against the specification', () => {
  it('the fixture is well formed', () => {
    expect(FIXTURE.source).toMatch(/specification/);
    expect(FIXTURE.routes).toHaveLength(177);
    const seen = new Set<string>();
    for (const r of FIXTURE.routes) {
      expect(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'WS', null]).toContain(r.method);
      expect(r.path.startsWith('/v1/') || r.served_by === 'pipeline', label(r)).toBe(true);
      expect(r.match === undefined || r.path.includes('*'), label(r)).toBe(true);
      expect(seen.has(label(r)), `duplicate ${label(r)}`).toBe(false);
      seen.add(label(r));
    }
    expect(GOVERNANCE_AND_SPACES).toHaveLength(67);
    expect(new Set(GOVERNANCE_AND_SPACES).size).toBe(67);
  });

  it.each(contractRoutes.map((r) => [label(r), r] as const))('%s is in the contract', (_label, r) => {
    expect(servedByContract(r), `${label(r)} (specification: ${r.from}) is missing from api/index.ts SPECS`).toBe(true);
  });

  it.each(GOVERNANCE_AND_SPACES.map((p) => [p]))('%s is in the contract with its method', (p) => {
    const [method, route] = p.split(' ') as [string, string];
    expect(SPECS.some((s) => s.method === method && norm(s.path) === norm(route)), `${p} is missing from api/index.ts SPECS`).toBe(true);
  });

  it('the stream is served by the WebSocket transport', () => {
    for (const r of FIXTURE.routes.filter((x) => x.served_by === 'websocket')) {
      expect(STREAM_PATHS.map((s) => s.path)).toContain(r.path);
    }
  });

  let agent: RunningAgent | null = null;
  afterAll(async () => agent?.close());
  it('the pipeline pages answer on a live agent', async () => {
    agent = await startAgent({});
    const pages = FIXTURE.routes.filter((x) => x.served_by === 'pipeline');
    expect(pages.length).toBeGreaterThan(0);
    for (const r of pages) {
      const res = await agent.fetch(r.path, { method: r.method ?? 'GET' });
      expect(res.status, label(r)).toBe(200);
      expect(res.headers.get('content-type') ?? '').toMatch(/text\/html/);
    }
  });
});
