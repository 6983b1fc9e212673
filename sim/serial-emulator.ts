import { encodeMessage, FrameDecoder } from '../firmware-bridge/frame.js';
import { SerialLink } from '../hal/index.js';
import { emulatedFirmwareFor } from './emulated-firmware-for.js';
import type { EmulatorSpec } from './run-emulator.js';

/** A microcontroller running the bridge firmware, on the device end of a serial line. */
export async function startSerialEmulator(path: string, spec: EmulatorSpec, baudRate = 115200): Promise<() => Promise<void>> {
  const link = new SerialLink({ path, baudRate, lock: false });
  const decoder = new FrameDecoder();
  let sent = 0;
  const firmware = emulatedFirmwareFor(spec, (msg) => {
    const frame = encodeMessage(msg);
    sent++;
    // Line noise on demand: every n-th frame gets one byte flipped, so its CRC fails at the gateway.
    if (spec.corruptEvery && sent % spec.corruptEvery === 0) {
      const i = Math.floor(frame.length / 2);
      frame[i] = frame[i]! ^ 0x20;
    }
    link.write(frame);
  });
  link.on('data', (chunk) => {
    for (const msg of decoder.push(chunk)) firmware.handle(msg);
  });
  link.on('error', () => undefined);
  await link.open({ timeoutMs: 10_000 });
  firmware.start();
  return async () => {
    firmware.stop();
    await link.drain().catch(() => undefined);
    await link.close();
  };
}
