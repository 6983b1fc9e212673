import { startMqttEmulator } from './mqtt-emulator.js';
import { startSerialEmulator } from './serial-emulator.js';

export interface EmulatorSpec {
  id: string;
  deviceType: string;
  firmwareVersion: string;
  rateHz: number;
  faults: string[];
  /** Hardware faults that survive `clear_faults` and reboots. */
  persistentFaults?: string[];
  seed: number;
  /** `fail`: updates activate but fail their self-test and roll back; `corrupt`: flash writes corrupt the image. */
  firmwareSelfTest?: 'pass' | 'fail' | 'corrupt';
  /** Flip a byte in every n-th frame sent (line noise), 0/undefined = never. */
  corruptEvery?: number;
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
    case 'serial':
      return startSerialEmulator(target, spec, extras.baudRate);
    case 'slcan':
      return (await import('./slcan-emulator.js')).startSlcanEmulator(target, spec, extras.node ?? 1);
  }
}
