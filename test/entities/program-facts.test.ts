import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DeviceRegistry } from '../../agent/devices/device-registry.js';
import { EntityService } from '../../agent/entities/entity-service.js';
import type { ProgramFacts } from '../../agent/entities/program-facts.js';
import { EventBus } from '../../agent/events/event-bus.js';
import type { PlatformEvent } from '../../agent/events/platform-events.js';
import { tempDir } from '../helpers/agent-harness.js';

/** The registry as a plain domain service, fed program facts directly (no parser, no transport). */
async function service(facts: () => ProgramFacts | null) {
  const bus = new EventBus();
  const events: PlatformEvent[] = [];
  bus.subscribe((e) => events.push(e));
  const devices = DeviceRegistry.fromConfig(null);
  const s = await EntityService.open({ overlayFile: path.join(tempDir(), 'entity-overlays.json'), config: null, devices: () => devices.list(), programFacts: facts, bus, warn: () => undefined });
  return { s, events, devices };
}

const PROGRAM: ProgramFacts = {
  file: 'warehouse.sd',
  robots: [
    {
      name: 'picker',
      sensors: [
        { name: 'depth', type: 'depth_camera' },
        { name: 'scale', type: 'load_cell' },
      ],
      actuators: [{ name: 'arm', type: 'servo' }],
      missions: [{ name: 'restock' }, { name: null }],
    },
  ],
  missionPlans: [{ name: 'inventory-count' }],
};

describe('entities from program facts (the ProgramFacts hook)', () => {
  it('derives robots, sensors, actuators and missions with participates_in links', async () => {
    const { s } = await service(() => PROGRAM);
    const all = s.list({});
    expect(all.map((e) => [e.id, e.kind])).toEqual([
      ['mission:inventory-count', 'mission'],
      ['mission:picker:mission', 'mission'],
      ['mission:picker:restock', 'mission'],
      ['picker', 'robot'],
      ['picker:arm', 'actuator'],
      ['picker:depth', 'camera'],
      ['picker:scale', 'sensor'],
    ]);
    expect(s.get('picker')).toMatchObject({
      entity_type: 'robot',
      children_ids: ['picker:arm', 'picker:depth', 'picker:scale'],
      capabilities: ['depth_camera', 'load_cell', 'servo'],
      lifecycle_state: 'provisioned',
      metadata: { program_file: 'warehouse.sd' },
    });
    expect(s.get('mission:picker:restock')).toMatchObject({ name: 'restock', metadata: { robot: 'picker', declared_in: 'warehouse.sd' } });
    expect(s.list({ participatesIn: ['mission:picker:restock'] }).map((e) => e.id)).toEqual(['picker']);
    expect(s.relationships('mission:picker:restock').relationships).toEqual([{ from_id: 'picker', to_id: 'mission:picker:restock', kind: 'participates_in' }]);
    expect(s.readiness('picker')).toMatchObject({ linked_missions: ['mission:picker:mission', 'mission:picker:restock'], readiness_status: 'unknown' });
    expect(s.traceability({}).rows.map((r) => `${r.mission_id} ${r.capability} ${r.provided_by.join(',')}`)).toEqual([
      'mission:picker:mission depth_camera picker:depth',
      'mission:picker:mission load_cell picker:scale',
      'mission:picker:mission servo picker:arm',
      'mission:picker:restock depth_camera picker:depth',
      'mission:picker:restock load_cell picker:scale',
      'mission:picker:restock servo picker:arm',
    ]);
  });

  it('follows the facts live (a reloaded program) and merges a program robot with the device pool', async () => {
    let facts: ProgramFacts | null = null;
    const { s, devices, events } = await service(() => facts);
    expect(s.list({})).toEqual([]);
    facts = PROGRAM;
    devices.observe({ id: 'picker-gripper', device_type: 'gripper', protocol: 'fw-bridge/1', transport: 'serial', port: '/dev/ttyS2' });
    devices.update('picker-gripper', { assigned_robot: 'picker', lifecycle_state: 'active' });
    expect(s.get('picker').children_ids).toEqual(['picker-gripper', 'picker:arm', 'picker:depth', 'picker:scale']);
    const r = s.readiness('picker');
    expect(r).toMatchObject({ readiness_status: 'ready', mission_ready: true, device_readiness: { total_devices: 1, blocked_count: 0 } });
    expect(events.filter((e) => e.type === 'ReadinessChanged' && e.entity_id === 'picker')).toHaveLength(1);
    facts = null;
    expect(s.list({}).map((e) => e.id)).toEqual(['picker-gripper']);
    expect(() => s.get('picker')).toThrow("entity 'picker' not found");
  });
});

describe('entities from the agent --program, parsed', () => {
  it('lists the robot, its sensors and its missions of a real .sd file over HTTP', async () => {
    const { startAgent } = await import('../helpers/agent-harness.js');
    const repo = path.resolve(__dirname, '../..');
    const agent = await startAgent({ configPath: path.join(repo, 'demo', 'svc.toml'), programPath: path.join(repo, 'demo', 'programs', 'patrol.sd') });
    try {
      const robot = await agent.json('/v1/entities/Sentinel');
      expect(robot.status).toBe(200);
      expect(robot.body.entity).toMatchObject({ entity_type: 'robot', metadata: { program_file: 'programs/patrol.sd' } });
      expect(robot.body.entity.children_ids).toEqual(expect.arrayContaining(['Sentinel:lidar', 'Sentinel:wheels']));
      const rel = await agent.json('/v1/entities/mission:Sentinel:Patrol/relationships');
      expect(rel.status).toBe(200);
      expect(rel.body.relationships).toContainEqual({ from_id: 'Sentinel', to_id: 'mission:Sentinel:Patrol', kind: 'participates_in' });
      expect((await agent.json('/v1/entities/mission:NightRound')).status).toBe(200);
    } finally {
      await agent.close();
    }
  });
});
