import { EmulatedFirmware } from '../firmware-bridge/device/emulated-firmware.js';
import type { Message } from '../firmware-bridge/messages.js';
import { metricsFor, ReadingGenerator } from './readings.js';
import type { EmulatorSpec } from './run-emulator.js';

/** The emulated bridge firmware an emulator spec describes, whatever transport carries its messages. */
export function emulatedFirmwareFor(spec: EmulatorSpec, send: (msg: Message) => void): EmulatedFirmware {
  const models = metricsFor(spec.deviceType);
  const gen = new ReadingGenerator(models, spec.seed);
  return new EmulatedFirmware({
    deviceId: spec.id,
    deviceType: spec.deviceType,
    firmwareVersion: spec.firmwareVersion,
    sample: () => {
      const values = gen.next();
      return models.map((m) => ({ name: m.name, value: values[m.name]!, unit: m.unit }));
    },
    telemetryPeriodMs: Math.max(1, Math.round(1000 / spec.rateHz)),
    faults: spec.faults,
    persistentFaults: spec.persistentFaults ?? [],
    selfTestPasses: spec.firmwareSelfTest !== 'fail',
    flashFault: spec.firmwareSelfTest === 'corrupt',
    send,
  });
}
