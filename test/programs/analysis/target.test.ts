import { describe, expect, it } from 'vitest';
import { NO_TARGET_MESSAGE, resolveTargets } from '../../../agent/programs/analysis/target.js';
import { verifyHardware } from '../../../agent/programs/analysis/verify-hardware.js';
import { configFrom } from './config-fixture.js';
import { at, hardware, program, rover } from './program-factory.js';

const fleetConfig = () =>
  configFrom('[fleet]\nid = "f"\n[[fleet.robots]]\nid = "R"\nhardware_profile = "JetsonOrin"\n[[fleet.robots]]\nid = "S"\nhardware_profile = "ESP32"\n');

describe('target resolution (docs/program-language.md §1)', () => {
  const deployed = program({
    robots: [rover('R')],
    deploys: [
      { robot: 'R', targets: ['RoverV1', 'RoverV2'], loc: at(2) },
      { robot: 'R', targets: ['ESP32'], loc: at(3) },
    ],
  });

  it('prefers the explicit target', () => {
    expect(resolveTargets(deployed, fleetConfig(), { target: 'RaspberryPi5' })).toEqual({ kind: 'single', target: 'RaspberryPi5', source: 'explicit' });
  });

  it('then the first target of the first deploy', () => {
    expect(resolveTargets(deployed, fleetConfig(), { target: null })).toEqual({ kind: 'single', target: 'RoverV1', source: 'deploy' });
    expect(resolveTargets(deployed, null, { target: '  ' })).toEqual({ kind: 'single', target: 'RoverV1', source: 'deploy' });
  });

  it('then the hardware_profile of the first fleet robot', () => {
    expect(resolveTargets(program({ robots: [rover('R')] }), fleetConfig())).toEqual({ kind: 'single', target: 'JetsonOrin', source: 'config' });
  });

  it('else none, which verify hardware reports as one pass item', () => {
    const p = program({ robots: [rover('R')] });
    expect(resolveTargets(p, null)).toEqual({ kind: 'none' });
    expect(verifyHardware(p, { config: null })).toEqual({
      compatible: true,
      target: null,
      items: [{ category: 'deployment', message: NO_TARGET_MESSAGE, severity: 'pass', line: 0, column: 0 }],
      matrix: null,
    });
  });

  it('checks every profile, sorted, only with all_targets', () => {
    const p = program({ hardware: [hardware('Alpha'), hardware('Zeta')] });
    expect(resolveTargets(p, null, { allTargets: true, target: 'RoverV1' })).toEqual({
      kind: 'all',
      targets: ['Alpha', 'BuildingEdgeV1', 'ESP32', 'JetsonOrin', 'RaspberryPi5', 'RoverV1', 'RoverV2', 'SmartSpaceGatewayV1', 'Zeta'],
    });
  });
});
