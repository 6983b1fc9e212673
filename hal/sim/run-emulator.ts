import { startMqttEmulator } from './mqtt-emulator.js';

export interface EmulatorSpec {
  id: string;
  deviceType: string;
  firmwareVersion: string;
  rateHz: number;
  faults: string[];
  seed: number;
}

export interface EmulatorExtras {
  node?: number | undefined;
  baudRate?: number | undefined;
  bitrate?: number | undefined;
  prefix?: string | undefined;
}

/** Starts an emulated device on one transport; resolves with its stop function. */
export async function runEmulator(transport: 'serial' | 'slcan' | 'mqtt', target: string, spec: EmulatorSpec, extras: EmulatorExtras = {}): Promise<() => Promise<void>> {
  switch (transport) {
    case 'mqtt':
      return startMqttEmulator(target, spec, extras.prefix);
    default:
      throw new Error(`${transport} emulation is being added`);
  }
}
