import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DeviceRegistry } from '../../agent/devices/device-registry.js';
import { EntityService } from '../../agent/entities/entity-service.js';
import { EventBus } from '../../agent/events/event-bus.js';
import { ProgramEngine } from '../../agent/programs/program-engine.js';
import { tempDir } from '../helpers/agent-harness.js';

/**
 * A sensor's driver clause (`sensor imu: IMU from bosch.bno055 on imu_bus;`) reaches the entity
 * registry as vendor/model metadata: a real program file, the engine's program facts, the registry.
 */
describe('sensor driver clause in the entity registry', () => {
  it('a sensor with a driver carries vendor and model; one without has neither', async () => {
    const dir = tempDir('svc-driver-');
    const file = path.join(dir, 'buggy.sd');
    fs.copyFileSync(path.join(__dirname, '../programs/language/forms/sensor_driver.sd'), file);
    const engine = new ProgramEngine({ projectRoot: dir, config: null, programPath: file, stateDir: tempDir('svc-driver-state-'), decisions: {} as never, confineToRoot: false, cwd: dir });
    const facts = engine.programFacts()!;
    expect(facts.robots[0]!.sensors).toEqual([
      { name: 'imu', type: 'IMU', vendor: 'bosch', model: 'bno055' },
      { name: 'fix', type: 'GPS', vendor: 'ublox', model: 'zed_f9p' },
      { name: 'lidar', type: 'Lidar' },
    ]);
    const devices = DeviceRegistry.fromConfig(null);
    const entities = await EntityService.open({
      overlayFile: path.join(tempDir(), 'entity-overlays.json'), config: null, devices: () => devices.list(), programFacts: () => facts, bus: new EventBus(), warn: () => undefined,
    });
    expect(entities.get('SurveyBuggy:imu')!.metadata).toMatchObject({ vendor: 'bosch', model: 'bno055' });
    expect(entities.get('SurveyBuggy:fix')!.metadata).toMatchObject({ vendor: 'ublox', model: 'zed_f9p' });
    expect(Object.keys(entities.get('SurveyBuggy:lidar')!.metadata ?? {})).not.toContain('vendor');
  });
});
