import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'smol-toml';
import { afterEach, describe, expect, it } from 'vitest';
import { ENTITY_KINDS, RELATIONSHIP_KINDS } from '../../agent/entities/kinds.js';
import type { PlatformEvent } from '../../agent/events/platform-events.js';
import { tempDir } from '../helpers/agent-harness.js';
import { openStream, type StreamClient } from '../helpers/stream-client.js';
import { ADMIN, bearer, entityAgent, ids, keyFor, layeredProject, post, type EntityAgent } from './fixture.js';

let running: EntityAgent[] = [];
let streams: StreamClient[] = [];
afterEach(async () => {
  streams.forEach((s) => s.close());
  streams = [];
  await Promise.all(running.map((a) => a.close()));
  running = [];
});
async function agent(options: Parameters<typeof entityAgent>[0] = {}) {
  const a = await entityAgent(options);
  running.push(a);
  return a;
}
function recordEvents(a: EntityAgent): PlatformEvent[] {
  const events: PlatformEvent[] = [];
  a.agent.services.bus.subscribe((e) => events.push(e));
  return events;
}

const FORKLIFT = {
  id: 'forklift-7',
  entity_type: { custom: 'forklift' },
  display_name: 'Forklift 7',
  parent_id: 'north-yard',
  capabilities: ['lifting'],
  metadata: { vendor: 'Linde' },
  tags: ['yard'],
};

describe('entity mutations: register, tag, relate, sync (Provision role)', () => {
  it('refuses mutations without credentials (401) and with a role lacking Provision (403); reads stay open', async () => {
    const a = await agent();
    const events = recordEvents(a);
    const operator = await keyFor(a, 'operator');
    const auditor = await keyFor(a, 'auditor');
    const supervisor = await keyFor(a, 'supervisor');
    const calls: Array<[string, unknown]> = [
      ['/v1/entities/register', FORKLIFT],
      ['/v1/entities/gps-a/tags', { add: ['x'] }],
      ['/v1/entities/relationships', { from_id: 'ana', to_id: 'cam-gate', kind: 'monitors' }],
      ['/v1/entities/sync', {}],
    ];
    for (const [p, body] of calls) {
      const none = await post(a, p, null, body);
      expect(none.status, p).toBe(401);
      expect(none.body).toEqual({ ok: false, error: 'unauthorized', code: 'unauthorized' });
      for (const token of [operator, auditor]) {
        const r = await post(a, p, token, body);
        expect(r.status, p).toBe(403);
        expect(r.body.code).toBe('forbidden');
      }
    }
    const failures = events.filter((e) => e.type === 'AuthFailed').map((e) => e.payload['reason']);
    expect(failures.filter((r) => r === 'missing_or_invalid_token')).toHaveLength(4);
    expect(failures.filter((r) => r === 'insufficient_role')).toHaveLength(8);
    // Nothing was changed by the refused calls.
    expect(ids((await a.json('/v1/entities?kind=forklift')).body.entities)).toEqual([]);
    expect(fs.existsSync(path.join(path.dirname(a.configPath), 'svc.entities.toml'))).toBe(false);
    // A supervisor holds Provision.
    expect((await post(a, '/v1/entities/register', supervisor, FORKLIFT)).status).toBe(200);
    // Read-like POSTs (query, verify) need no credential.
    expect((await post(a, '/v1/entities/query', null, { kind: 'forklift' })).body.result.count).toBe(1);
    expect((await post(a, '/v1/entities/forklift-7/verify', null, {})).status).toBe(200);
  });

  it('registers custom and built-in kinds, updates existing entities, and rejects bad bodies with clear messages', async () => {
    const a = await agent();
    const r = await post(a, '/v1/entities/register', ADMIN, FORKLIFT);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ version: 'v1', ok: true, overlay_version: 1, created: true, sync: null });
    expect(r.body.entity).toMatchObject({
      id: 'forklift-7',
      entity_type: { custom: 'forklift' },
      display_name: 'Forklift 7',
      parent_id: 'north-yard',
      capabilities: ['lifting'],
      tags: ['yard'],
      metadata: { vendor: 'Linde' },
      lifecycle_state: 'unknown',
      audit: { source: 'registered by env-default', created_at: expect.any(String) },
    });
    const summary = (await a.json('/v1/entities?kind=forklift')).body.entities;
    expect(summary).toEqual([expect.objectContaining({ id: 'forklift-7', kind: 'forklift', entity_type: { custom: 'forklift' }, parent_id: 'north-yard' })]);
    // The facility now has it as a child.
    expect((await a.json('/v1/entities/north-yard')).body.entity.children_ids).toEqual(['forklift-7', 'north-yard:bay-1', 'north-yard:gate']);
    // A built-in kind with stated statuses and governance; the string "charger" becomes a custom kind.
    const drone = await post(a, '/v1/entities/register', ADMIN, { id: 'drone-1', entity_type: 'drone', lifecycle_state: 'provisioned', readiness_status: 'ready', governance: { owner_team: 'air' } });
    expect(drone.body.entity).toMatchObject({ entity_type: 'drone', readiness_status: 'ready', lifecycle_state: 'provisioned', governance: { owner_team: 'air' } });
    expect((await post(a, '/v1/entities/register', ADMIN, { id: 'dock-1', entity_type: 'charger' })).body.entity.entity_type).toEqual({ custom: 'charger' });
    // Registering an existing (configured) entity overlays it: device facts stay, stated fields are added.
    const gps = await post(a, '/v1/entities/register', ADMIN, { id: 'gps-a', entity_type: 'gps', display_name: 'Primary GNSS', owner: 'ana' });
    expect(gps.body).toMatchObject({ created: false, overlay_version: 4 });
    expect(gps.body.entity).toMatchObject({ display_name: 'Primary GNSS', owner: 'ana', firmware_version: '1.2.0', provider: 'ublox', parent_id: 'insp-01' });

    const bad = async (body: unknown, message: string | RegExp, status = 400) => {
      const res = await post(a, '/v1/entities/register', ADMIN, body);
      expect(res.status, JSON.stringify(body)).toBe(status);
      if (typeof message === 'string') expect(res.body.error).toBe(message);
      else expect(res.body.error).toMatch(message);
    };
    await bad({ entity_type: 'robot' }, 'missing id');
    await bad({ id: 'x' }, 'missing entity_type');
    await bad({ id: 'x', entity_type: 'Not A Kind!' }, /^invalid field 'entity_type'/);
    await bad({ id: 'a/b', entity_type: 'robot' }, /^invalid field 'id': ids cannot contain/);
    await bad({ id: 'x', entity_type: 'robot', parent_id: 'nowhere' }, "entity 'nowhere' not found (parent_id)");
    await bad({ id: 'x', entity_type: 'robot', health_status: 'fine' }, /^invalid field 'health_status'/);
    await bad({ id: 'x', entity_type: 'robot', tags: ['a,b'] }, /^invalid field 'tags\.0': tags cannot contain commas/);
    const malformed = await a.json('/v1/entities/register', { method: 'POST', headers: bearer(ADMIN), body: '{"id":' });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error).toMatch(/^invalid JSON body/);
  });

  it('accepts every one of the 37 built-in kinds and every relationship kind', async () => {
    const a = await agent({ configPath: null });
    expect(ENTITY_KINDS).toHaveLength(37);
    for (const kind of ENTITY_KINDS) {
      const r = await post(a, '/v1/entities/register', ADMIN, { id: `k-${kind}`, entity_type: kind });
      expect(r.status, kind).toBe(200);
      expect(r.body.entity.entity_type).toBe(kind);
    }
    const all = (await a.json('/v1/entities')).body.entities as Array<{ id: string; kind: string }>;
    expect(all.map((e) => e.kind).sort()).toEqual([...ENTITY_KINDS].sort());
    expect(ids((await a.json('/v1/entities?kind=spatial_session')).body.entities)).toEqual(['k-spatial_session']);
    for (const kind of RELATIONSHIP_KINDS) {
      const r = await post(a, '/v1/entities/relationships', ADMIN, { from_id: 'k-robot', to_id: 'k-mission', kind });
      expect(r.status, kind).toBe(200);
    }
    const rels = (await a.json('/v1/entities/k-robot/relationships')).body.relationships as Array<{ kind: string }>;
    expect(rels.map((r) => r.kind).sort()).toEqual([...RELATIONSHIP_KINDS].sort());
  });

  it('adds and removes tags, relates entities, and refuses unknown entities and bad kinds', async () => {
    const a = await agent();
    const t = await post(a, '/v1/entities/gps-a/tags', ADMIN, { add: ['inspected', 'north'], remove: ['critical'] });
    expect(t.status).toBe(200);
    expect(t.body).toMatchObject({ ok: true, overlay_version: 1, entity: { id: 'gps-a', tags: ['inspected', 'north'] } });
    expect(ids((await a.json('/v1/entities?tag=critical')).body.entities)).toEqual([]);
    expect(ids((await a.json('/v1/entities?tag=north,inspected')).body.entities)).toEqual(['gps-a']);
    expect((await post(a, '/v1/entities/gps-a/tags', ADMIN, {})).body.error).toBe("invalid field 'body': add or remove at least one tag");
    expect((await post(a, '/v1/entities/gps-a/tags', ADMIN, { add: ['x'], remove: ['x'] })).body.error).toBe("tag 'x' is both added and removed");

    const rel = await post(a, '/v1/entities/relationships', ADMIN, { from_id: 'ana', to_id: 'cam-gate', kind: 'monitors', label: 'gate watch' });
    expect(rel.status).toBe(200);
    expect(rel.body).toEqual({ version: 'v1', ok: true, relationship: { from_id: 'ana', to_id: 'cam-gate', kind: 'monitors', label: 'gate watch' }, overlay_version: 2, created: true });
    expect((await a.json('/v1/entities/cam-gate/relationships')).body.relationships).toContainEqual({ from_id: 'ana', to_id: 'cam-gate', kind: 'monitors', label: 'gate watch' });
    // The same edge again is not a second edge.
    expect((await post(a, '/v1/entities/relationships', ADMIN, { from_id: 'ana', to_id: 'cam-gate', kind: 'monitors' })).body.created).toBe(false);
    expect((await a.json('/v1/entities/graph')).body.graph.edges.filter((e: { from_id: string; to_id: string }) => e.from_id === 'ana' && e.to_id === 'cam-gate')).toHaveLength(1);
    // A new dependency shows in the impact analysis at once.
    await post(a, '/v1/entities/relationships', ADMIN, { from_id: 'cam-gate', to_id: 'insp-01-cpu', kind: 'depends_on' });
    expect((await a.json('/v1/entities/insp-01-cpu/relationships')).body.impact).toContain('cam-gate');

    for (const [body, status, message] of [
      [{ from_id: 'ana', to_id: 'ghost', kind: 'monitors' }, 400, "entity 'ghost' not found"],
      [{ from_id: 'nobody', to_id: 'cam-gate', kind: 'monitors' }, 400, "entity 'nobody' not found"],
      [{ from_id: 'ana', to_id: 'ana', kind: 'monitors' }, 400, 'an entity cannot be related to itself'],
      [{ from_id: 'ana', to_id: 'cam-gate' }, 400, 'missing kind'],
      [{ to_id: 'cam-gate', kind: 'owns' }, 400, 'missing from_id'],
    ] as const) {
      const r = await post(a, '/v1/entities/relationships', ADMIN, body);
      expect(r.status, JSON.stringify(body)).toBe(status);
      expect(r.body.error).toBe(message);
    }
    const likes = await post(a, '/v1/entities/relationships', ADMIN, { from_id: 'ana', to_id: 'cam-gate', kind: 'likes' });
    expect(likes.status).toBe(400);
    expect(likes.body.error).toMatch(/^invalid field 'kind': .*participates_in/);
    expect((await post(a, '/v1/entities/relationships', ADMIN, { from_id: 'ana', to_id: 'ghost', kind: 'monitors' })).body.code).toBe('not_found');
  });

  it('publishes EntityCreated, EntityUpdated, EntityTagged and EntityRelated to the stream and the audit chain', async () => {
    const a = await agent();
    const stream = await openStream(a.wsUrl);
    streams.push(stream);
    await post(a, '/v1/entities/register', ADMIN, FORKLIFT);
    await post(a, '/v1/entities/register', ADMIN, { ...FORKLIFT, display_name: 'Forklift seven' });
    await post(a, '/v1/entities/forklift-7/tags', ADMIN, { add: ['loaded'] });
    await post(a, '/v1/entities/relationships', ADMIN, { from_id: 'forklift-7', to_id: 'north-yard:bay-1', kind: 'located_in' });
    await post(a, '/v1/entities/sync', ADMIN);
    const frame = (name: string) => stream.waitFor((f) => f.type === 'telemetry' && f.event?.kind === 'platform' && f.event.event_type === name);
    expect((await frame('entity_created')).event).toMatchObject({ source: 'svc-api', entity_id: 'forklift-7', payload: { entity_id: 'forklift-7', entity_type: 'forklift' } });
    expect((await frame('entity_tagged')).event).toMatchObject({ entity_id: 'forklift-7', payload: { entity_id: 'forklift-7', added: ['loaded'], tags: ['loaded', 'yard'] } });
    expect((await frame('entity_related')).event.payload).toMatchObject({ from_id: 'forklift-7', to_id: 'north-yard:bay-1', kind: 'located_in' });
    await stream.waitFor((f) => f.event?.event_type === 'entity_updated' && f.event.payload.path?.endsWith('svc.entities.toml'));
    expect(stream.frames.filter((f) => f.event?.event_type === 'entity_updated').map((f) => f.event.payload.entity_id ?? 'sync')).toEqual(['forklift-7', 'sync']);

    const audit = (await a.json('/v1/audit/mutations', { headers: bearer(ADMIN) })).body.audit.records as Array<{ event_type: string; payload: string }>;
    const entityRecords = audit.filter((r) => r.event_type.startsWith('Entity')).map((r) => [r.event_type, JSON.parse(r.payload)]);
    expect(entityRecords.map(([t]) => t)).toEqual(['EntityCreated', 'EntityUpdated', 'EntityTagged', 'EntityRelated', 'EntityUpdated']);
    expect(entityRecords[0]![1]).toMatchObject({ source: 'svc-api', entity_id: 'forklift-7', entity_type: 'forklift' });
    expect(audit.filter((r) => r.event_type === 'control_center.api.mutation').map((r) => JSON.parse(r.payload).path)).toEqual([
      '/v1/entities/register',
      '/v1/entities/register',
      '/v1/entities/forklift-7/tags',
      '/v1/entities/relationships',
      '/v1/entities/sync',
    ]);
  });

  it('sync writes the overlay into the project atomically as a fragment the agent reads back', async () => {
    const a = await agent();
    await post(a, '/v1/entities/register', ADMIN, FORKLIFT);
    await post(a, '/v1/entities/gps-a/tags', ADMIN, { add: ['north'], remove: ['critical'] });
    await post(a, '/v1/entities/relationships', ADMIN, { from_id: 'ana', to_id: 'forklift-7', kind: 'controls', label: 'day shift' });
    const s = await post(a, '/v1/entities/sync', ADMIN);
    expect(s.status).toBe(200);
    const root = path.dirname(a.configPath);
    const file = path.join(root, 'svc.entities.toml');
    expect(s.body).toEqual({
      version: 'v1',
      ok: true,
      sync: { path: file, entities_written: 1, relationships_written: 1, tag_edits_written: 1, created_fragment: true, overlay_version: 3 },
    });
    const doc = parse(fs.readFileSync(file, 'utf8')) as any;
    expect(doc.entities).toEqual([
      { id: 'forklift-7', entity_type: { custom: 'forklift' }, display_name: 'Forklift 7', parent_id: 'north-yard', capabilities: ['lifting'], metadata: { vendor: 'Linde' }, tags: ['yard'] },
    ]);
    expect(doc.relationships).toEqual([{ from_id: 'ana', to_id: 'forklift-7', kind: 'controls', label: 'day shift' }]);
    expect(doc.entity_tags).toEqual({ 'gps-a': { added: ['north'], removed: ['critical'] } });
    expect(doc.entity_sync.overlay_version).toBe(3);
    // No temporary file is left behind; a second sync replaces the file.
    expect(fs.readdirSync(root).filter((f) => f.includes('.tmp-'))).toEqual([]);
    const again = await post(a, '/v1/entities/sync', ADMIN);
    expect(again.body.sync.created_fragment).toBe(false);
    // register with persist:true syncs in the same call.
    const persisted = await post(a, '/v1/entities/register', ADMIN, { id: 'beacon-1', entity_type: 'iot_device', persist: true });
    expect(persisted.body.sync).toMatchObject({ path: file, entities_written: 2, created_fragment: false });
    expect((parse(fs.readFileSync(file, 'utf8')) as any).entities.map((e: { id: string }) => e.id)).toEqual(['beacon-1', 'forklift-7']);
  });

  it('keeps registered entities, tags and relationships across a restart, and the synced fragment stands without the overlay', async () => {
    const stateDir = tempDir();
    const configPath = layeredProject();
    const a = await agent({ stateDir, configPath });
    await post(a, '/v1/entities/register', ADMIN, FORKLIFT);
    await post(a, '/v1/entities/gps-a/tags', ADMIN, { add: ['north'], remove: ['critical'] });
    await post(a, '/v1/entities/relationships', ADMIN, { from_id: 'ana', to_id: 'forklift-7', kind: 'controls' });
    await a.close();
    running = [];

    const b = await agent({ stateDir, configPath });
    expect((await b.json('/v1/entities/forklift-7')).body.entity).toMatchObject({ entity_type: { custom: 'forklift' }, display_name: 'Forklift 7', tags: ['yard'] });
    expect((await b.json('/v1/entities/gps-a')).body.entity.tags).toEqual(['north']);
    expect((await b.json('/v1/entities/forklift-7/relationships')).body.relationships).toEqual([{ from_id: 'ana', to_id: 'forklift-7', kind: 'controls' }]);
    // The overlay version continues from where it was.
    expect((await post(b, '/v1/entities/forklift-7/tags', ADMIN, { add: ['checked'] })).body.overlay_version).toBe(4);
    expect((await post(b, '/v1/entities/sync', ADMIN)).status).toBe(200);
    await b.close();
    running = [];

    // Lose the overlay: the project's fragment still carries what was synced.
    fs.rmSync(path.join(stateDir, 'entity-overlays.json'));
    const c = await agent({ stateDir, configPath });
    expect((await c.json('/v1/entities/forklift-7')).body.entity).toMatchObject({ entity_type: { custom: 'forklift' }, tags: ['checked', 'yard'] });
    expect((await c.json('/v1/entities/gps-a')).body.entity.tags).toEqual(['north']);
    expect((await c.json('/v1/entities/ana/relationships')).body.relationships).toContainEqual({ from_id: 'ana', to_id: 'forklift-7', kind: 'controls' });
  });

  it('honours SVC_ENTITY_OVERLAY_PATH', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'nested', 'overlay.json');
    const a = await agent({ env: { SVC_ENTITY_OVERLAY_PATH: file } });
    await post(a, '/v1/entities/register', ADMIN, { id: 'ops-room', entity_type: 'command_center' });
    await a.agent.services.entities.flush();
    const saved = JSON.parse(fs.readFileSync(file, 'utf8'));
    expect(saved).toMatchObject({ overlay_version: 1, entities: { 'ops-room': { id: 'ops-room', entity_type: 'command_center', registered_by: 'env-default' } } });
  });
});

describe('entity overlay file', () => {
  it('survives a hand-edited overlay with wrong types: bad entries are skipped, good ones kept', async () => {
    const stateDir = tempDir();
    fs.writeFileSync(
      path.join(stateDir, 'entity-overlays.json'),
      JSON.stringify({
        overlay_version: 'seven',
        entities: {
          bad: { id: 5 },
          odd: { id: 'odd', entity_type: 'robot', labels: 'not-a-list', metadata: { shift: 2, ok: true, nested: { x: 1 } }, location: { coordinates: { lat: 59.3, floor: 2 } } },
        },
        tags: { odd: { added: 'x', removed: [1, 'gone'] } },
        relationships: [{ from_id: 'odd' }, { from_id: 'odd', to_id: 'insp-01', kind: 'befriends' }, { from_id: 'odd', to_id: 'insp-01', kind: 'reports_to' }],
      }),
    );
    const a = await entityAgent({ stateDir });
    running.push(a);
    const odd = (await a.json('/v1/entities/odd')).body.entity;
    expect(odd).toMatchObject({ entity_type: 'robot', metadata: { shift: '2', ok: 'true' }, location: { coordinates: { lat: 59.3, floor: 2 } } });
    expect(odd.labels).toEqual(['not-a-list']); // a lone string reads as one label
    expect((await a.json('/v1/entities/odd/relationships')).body.relationships).toEqual([{ from_id: 'odd', to_id: 'insp-01', kind: 'reports_to' }]);
    expect((await a.json('/v1/entities/bad')).status).toBe(404);
    // The next change starts the version afresh and rewrites a clean file.
    expect((await post(a, '/v1/entities/odd/tags', ADMIN, { add: ['fixed'] })).body).toMatchObject({ overlay_version: 1, entity: { tags: ['fixed'] } });
  });
});
