import { afterEach, describe, expect, it } from 'vitest';
import { writeProject } from '../helpers/project-fixture.js';
import { ADMIN, bearer, entityAgent, ids, type EntityAgent } from './fixture.js';

/**
 * The registry from configuration as operators write it (docs/entities.md § Where entities come from):
 * top-level `[[buildings]]` and `[[zones]]`, `[[entity_kinds]]` instances, providers named by their
 * own name in `[[relationships]]`, the organisation as `org:<project name>`, and the statuses of
 * things nothing live reports on.
 */
function harbourProject(): string {
  return writeProject({
    'svc.toml': `
[project]
name = "Harbour Logistics"
version = "2.0.0"
[config]
devices = "svc.devices.toml"
facilities = "svc.facilities.toml"
providers = "svc.providers.toml"
fleet = "svc.fleet.toml"
`,
    'svc.facilities.toml': `
[[facilities]]
id = "pier-4"
name = "Pier 4"
facility_type = "port_terminal"
compliance_profile = "iso-3691-4"

[[buildings]]
id = "cold-store"
name = "Cold store"
facility_id = "pier-4"
building_type = "warehouse"

[[buildings]]
id = "gatehouse"
type = "security_post"

[[zones]]
id = "chiller-aisle"
name = "Chiller aisle"
building_id = "cold-store"
type = "operational"
center = { x = 12.5, y = -3.0 }
radius_m = 6.0
description = "Aisle between the chillers"
[[zones.hazards]]
id = "ice-floor"
severity = "medium"

[[zones]]
id = "quay-apron"
facility_id = "pier-4"
type = "charging"

[[zones]]
id = "overflow-lot"

[[entity_kinds]]
id = "crane-3"
kind = "gantry_crane"
display_name = "Gantry crane 3"
capabilities = ["traverse", "lift"]
package = "crane-bridge"
parent_id = "quay-apron"
compliance_profile = "en-15011"

[[entity_kinds]]
id = "reefer-monitor"
kind = "iot_device"
parent_id = "cold-store"

[[entity_kinds]]
kind = "gantry_crane"
display_name = "no id: skipped"

[[relationships]]
from = "crane-3"
to = "liebherr"
kind = "depends_on"

[[relationships]]
from = "pier-4"
to = "org:Harbour Logistics"
kind = "managed_by"

[[relationships]]
from = "crane-3"
to = "provider:liebherr"
kind = "depends_on"

[[relationships]]
from = "org:harbour-logistics"
to = "gatehouse"
kind = "owns"

[[relationships]]
from = "tug-1"
to = "berth-12"
kind = "located_in"
`,
    'svc.providers.toml': `
[providers.liebherr]
package = "crane-bridge"
[dependencies]
crane-bridge = "3.2.0"
`,
    'svc.fleet.toml': `
[fleet]
id = "harbour-fleet"
[[fleet.robots]]
id = "tug-1"
hardware_profile = "RoverV2"
zone = "quay-apron"
`,
    'svc.devices.toml': `
[[devices]]
id = "tug-1-gps"
type = "gps"
robot_id = "tug-1"
[[devices]]
id = "reefer-probe"
type = "temperature"
zone = "chiller-aisle"
provider = "liebherr"
`,
  });
}

let running: EntityAgent[] = [];
afterEach(async () => {
  await Promise.all(running.map((a) => a.close()));
  running = [];
});
async function agent(): Promise<EntityAgent> {
  const a = await entityAgent({ configPath: harbourProject() });
  running.push(a);
  return a;
}

describe('entities from configuration as operators write it', () => {
  it('lists buildings, top-level zones, declared-kind instances, the organisation and providers with their ids, kinds and statuses', async () => {
    const a = await agent();
    const r = await a.json('/v1/entities');
    expect(r.status).toBe(200);
    const summary = Object.fromEntries(
      r.body.entities.map((e: { id: string; kind: string; entity_type: unknown; health_status: string; readiness_status: string; lifecycle_state: string; parent_id: string | null }) => [
        e.id,
        [e.kind, e.health_status, e.readiness_status, e.lifecycle_state, e.parent_id],
      ]),
    );
    expect(ids(r.body.entities)).toEqual([
      'chiller-aisle', 'cold-store', 'crane-3', 'gatehouse', 'harbour-fleet', 'ice-floor', 'liebherr', 'org:Harbour Logistics', 'overflow-lot',
      'package:crane-bridge', 'pier-4', 'quay-apron', 'reefer-monitor', 'reefer-probe', 'tug-1', 'tug-1-gps',
    ]);
    expect(summary).toEqual({
      'org:Harbour Logistics': ['organization', 'healthy', 'ready', 'active', null],
      'harbour-fleet': ['fleet', 'healthy', 'ready', 'active', 'org:Harbour Logistics'],
      'pier-4': ['facility', 'healthy', 'ready', 'active', null],
      'cold-store': ['building', 'healthy', 'ready', 'active', 'pier-4'],
      gatehouse: ['building', 'healthy', 'ready', 'active', null],
      'chiller-aisle': ['zone', 'healthy', 'ready', 'active', 'cold-store'],
      'quay-apron': ['zone', 'healthy', 'ready', 'active', 'pier-4'],
      'overflow-lot': ['zone', 'healthy', 'ready', 'active', null],
      'ice-floor': ['hazard', 'healthy', 'ready', 'active', 'chiller-aisle'],
      'crane-3': ['gantry_crane', 'healthy', 'ready', 'active', 'quay-apron'],
      'reefer-monitor': ['iot_device', 'healthy', 'ready', 'active', 'cold-store'],
      liebherr: ['provider', 'healthy', 'ready', 'active', null],
      'package:crane-bridge': ['package', 'healthy', 'ready', 'active', null],
      'tug-1': ['robot', 'healthy', 'ready', 'active', 'harbour-fleet'],
      // Devices nobody has heard from: health unknown (readiness and lifecycle follow the device pool:
      // assigned to a robot → active, unassigned → verified).
      'tug-1-gps': ['gps', 'unknown', 'ready', 'active', 'tug-1'],
      'reefer-probe': ['sensor', 'unknown', 'ready', 'verified', null],
    });
    const crane = r.body.entities.find((e: { id: string }) => e.id === 'crane-3');
    expect(crane).toMatchObject({ entity_type: { custom: 'gantry_crane' }, display_name: 'Gantry crane 3', capabilities: ['lift', 'traverse'] });
    // Filters see the new kinds like any other.
    expect(ids((await a.json('/v1/entities?kind=building,zone')).body.entities)).toEqual(['chiller-aisle', 'cold-store', 'gatehouse', 'overflow-lot', 'quay-apron']);
    expect(ids((await a.json('/v1/entities?kind=gantry_crane')).body.entities)).toEqual(['crane-3']);
    expect(ids((await a.json('/v1/entities?health=unknown')).body.entities)).toEqual(['reefer-probe', 'tug-1-gps']);
  });

  it('gives each entity its full record', async () => {
    const a = await agent();
    const org = await a.json(`/v1/entities/${encodeURIComponent('org:Harbour Logistics')}`);
    expect(org.status).toBe(200);
    expect(org.body.entity).toMatchObject({ id: 'org:Harbour Logistics', entity_type: 'organization', name: 'Harbour Logistics', version: '2.0.0', children_ids: ['harbour-fleet'] });
    expect((await a.json('/v1/entities/pier-4')).body.entity).toMatchObject({
      name: 'Pier 4',
      children_ids: ['cold-store', 'quay-apron'],
      metadata: { facility_type: 'port_terminal', compliance_profile: 'iso-3691-4' },
    });
    expect((await a.json('/v1/entities/cold-store')).body.entity).toMatchObject({
      entity_type: 'building',
      name: 'Cold store',
      parent_id: 'pier-4',
      children_ids: ['chiller-aisle', 'reefer-monitor'],
      metadata: { building_type: 'warehouse' },
    });
    expect((await a.json('/v1/entities/gatehouse')).body.entity.metadata).toEqual({ building_type: 'security_post' });
    expect((await a.json('/v1/entities/chiller-aisle')).body.entity).toEqual({
      id: 'chiller-aisle',
      name: 'Chiller aisle',
      description: 'Aisle between the chillers',
      entity_type: 'zone',
      parent_id: 'cold-store',
      children_ids: ['ice-floor'],
      location: { zone_id: 'chiller-aisle', coordinates: { x: 12.5, y: -3 } },
      health_status: 'healthy',
      readiness_status: 'ready',
      trust_status: 'unknown',
      lifecycle_state: 'active',
      metadata: { zone_type: 'operational', radius_m: '6' },
    });
    expect((await a.json('/v1/entities/crane-3')).body.entity).toEqual({
      id: 'crane-3',
      display_name: 'Gantry crane 3',
      entity_type: { custom: 'gantry_crane' },
      parent_id: 'quay-apron',
      package: 'crane-bridge',
      capabilities: ['lift', 'traverse'],
      health_status: 'healthy',
      readiness_status: 'ready',
      trust_status: 'unknown',
      lifecycle_state: 'active',
      metadata: { compliance_profile: 'en-15011' },
    });
    expect((await a.json('/v1/entities/liebherr')).body.entity).toMatchObject({ entity_type: 'provider', name: 'liebherr', package: 'crane-bridge' });
    // The old prefixed provider id is not an entity.
    expect((await a.json('/v1/entities/provider:liebherr')).status).toBe(404);
  });

  it('draws the configured places and relationships, and says why an unknown target is not drawn', async () => {
    const a = await agent();
    const g = (await a.json('/v1/entities/graph')).body;
    const edges = g.graph.edges.map((e: { from_id: string; kind: string; to_id: string }) => `${e.from_id} ${e.kind} ${e.to_id}`);
    expect(edges).toEqual([
      'cold-store contains chiller-aisle',
      'cold-store contains reefer-monitor',
      'crane-3 depends_on liebherr',
      'crane-3 depends_on package:crane-bridge',
      'harbour-fleet contains tug-1',
      'ice-floor located_in chiller-aisle',
      'liebherr depends_on package:crane-bridge',
      'org:Harbour Logistics owns gatehouse',
      'org:Harbour Logistics owns harbour-fleet',
      'org:Harbour Logistics owns pier-4',
      'pier-4 contains cold-store',
      'pier-4 contains quay-apron',
      'pier-4 managed_by org:Harbour Logistics',
      'quay-apron contains crane-3',
      'reefer-probe depends_on liebherr',
      'reefer-probe located_in chiller-aisle',
      'tug-1 located_in quay-apron',
      'tug-1-gps assigned_to tug-1',
    ]);
    expect(g.node_count).toBe(16);
    expect(g.dangling_edges).toEqual([
      { from_id: 'crane-3', kind: 'depends_on', to_id: 'provider:liebherr', missing: ['provider:liebherr'], diagnostic: "crane-3 depends_on provider:liebherr: no entity 'provider:liebherr' (did you mean 'liebherr'?)" },
      { from_id: 'org:harbour-logistics', kind: 'owns', to_id: 'gatehouse', missing: ['org:harbour-logistics'], diagnostic: "org:harbour-logistics owns gatehouse: no entity 'org:harbour-logistics' (did you mean 'org:Harbour Logistics'?)" },
      { from_id: 'tug-1', kind: 'located_in', to_id: 'berth-12', missing: ['berth-12'], diagnostic: "tug-1 located_in berth-12: no entity 'berth-12'" },
    ]);
    // The entity's own verification reports the same line.
    const verify = (await a.json('/v1/entities/tug-1/verify', { method: 'POST' })).body;
    expect(verify.checks.find((c: { check: string }) => c.check === 'relationships')).toEqual({
      check: 'relationships',
      passed: false,
      blocking: true,
      detail: "unresolved: tug-1 located_in berth-12: no entity 'berth-12'",
    });
    // The provider's relationships, under its own name.
    const provider = (await a.json('/v1/entities/liebherr/relationships')).body;
    expect(provider.relationships.map((e: { from_id: string; kind: string; to_id: string }) => `${e.from_id} ${e.kind} ${e.to_id}`)).toEqual([
      'crane-3 depends_on liebherr',
      'liebherr depends_on package:crane-bridge',
      'reefer-probe depends_on liebherr',
    ]);
    // What depends on it, and (outgoing) where those are.
    expect(provider.impact).toEqual(['chiller-aisle', 'crane-3', 'package:crane-bridge', 'reefer-probe']);
  });

  it('a live signal below a configured place still counts: a failed device makes its robot critical', async () => {
    const a = await agent();
    const patch = await a.json('/v1/devices/tug-1-gps', { method: 'PATCH', headers: bearer(ADMIN), body: JSON.stringify({ lifecycle_state: 'failed' }) });
    expect(patch.status).toBe(200);
    const tug = (await a.json('/v1/entities/tug-1')).body.entity;
    expect([tug.health_status, tug.readiness_status]).toEqual(['critical', 'not_ready']);
    // The fleet follows its robot; the places nothing reports on stay as configured.
    expect((await a.json('/v1/entities/harbour-fleet')).body.entity.health_status).toBe('critical');
    expect((await a.json('/v1/entities/quay-apron')).body.entity.health_status).toBe('healthy');
  });
});
