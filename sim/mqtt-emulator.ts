import { MqttDevice } from '../hal/index.js';
import { metricsFor, ReadingGenerator } from './readings.js';
import type { EmulatorSpec } from './run-emulator.js';

/** An emulated device following the MQTT device convention (docs/mqtt-devices.md). */
export async function startMqttEmulator(url: string, spec: EmulatorSpec, prefix?: string): Promise<() => Promise<void>> {
  const models = metricsFor(spec.deviceType);
  const gen = new ReadingGenerator(models, spec.seed);
  let faults = [...spec.faults];
  const device = new MqttDevice({
    url,
    ...(prefix ? { prefix } : {}),
    identity: {
      id: spec.id,
      device_type: spec.deviceType,
      firmware_version: spec.firmwareVersion,
      hardware_revision: 'sim-1',
      serial: `SIM-${spec.id}`,
      capabilities: models.map((m) => `measure_${m.name}`),
      metrics: models.map((m) => ({ name: m.name, unit: m.unit, type: 'number' as const })),
      commands: ['identify', 'set_fault', 'clear_faults'],
    },
    telemetryIntervalMs: Math.max(1, Math.round(1000 / spec.rateHz)),
    heartbeatIntervalMs: 1000,
    sample: () => gen.next(),
    commands: {
      identify: () => ({ status: 'ok', detail: `${spec.id} blinking` }),
      set_fault: (args) => {
        const name = typeof args['fault'] === 'string' ? args['fault'] : null;
        if (!name) return { status: 'rejected', detail: 'args.fault must be a string' };
        faults = [...new Set([...faults, name])];
        device.setFaults(faults);
        return { status: 'ok' };
      },
      clear_faults: () => {
        faults = [];
        device.setFaults(faults);
        return { status: 'ok' };
      },
    },
  });
  device.setFaults(faults);
  device.on('error', () => undefined);
  await device.start();
  return () => device.stop();
}
