import { CAN_BROADCAST_NODE, CanReassembler, encodeCanMessage } from '../firmware-bridge/can-mapping.js';
import { encodeSlcanFrame, SerialLink, SLCAN_BELL, SLCAN_OK, SlcanCommandParser } from '../hal/index.js';
import { emulatedFirmwareFor } from './emulated-firmware-for.js';
import type { EmulatorSpec } from './run-emulator.js';

/**
 * A USB-CAN adapter speaking SLCAN (Lawicel) on a serial line, with one firmware-bridge node behind
 * it on the CAN side. It answers the adapter commands the gateway sends (bitrate, open, close,
 * version, status), and carries the node's messages as CAN frames only while the channel is open.
 */
export async function startSlcanEmulator(path: string, spec: EmulatorSpec, node: number): Promise<() => Promise<void>> {
  if (!Number.isInteger(node) || node < 1 || node > 63) throw new Error('--node must be a CAN node id from 1 to 63');
  const link = new SerialLink({ path, baudRate: 115200, lock: false });
  const parser = new SlcanCommandParser();
  const reassembler = new CanReassembler();
  let channelOpen = false;
  let sent = 0;
  const firmware = emulatedFirmwareFor(spec, (msg) => {
    if (!channelOpen) return;
    for (const f of encodeCanMessage(msg, { node, direction: 'from_device' })) {
      let line = encodeSlcanFrame({ ...f, error: false });
      sent++;
      // Line noise on demand: a garbled SLCAN line the gateway must count and skip.
      if (spec.corruptEvery && sent % spec.corruptEvery === 0) line = `t${line.slice(1, 3)}Q${line.slice(4)}`;
      link.write(line);
    }
  });
  link.on('data', (chunk) => {
    for (const m of parser.push(chunk)) {
      switch (m.type) {
        case 'frame': {
          if (channelOpen) {
            link.write(m.frame.extended ? 'Z\r' : 'z\r');
            const d = reassembler.push(m.frame);
            if (d && d.direction === 'to_device' && (d.node === node || d.node === CAN_BROADCAST_NODE)) firmware.handle(d.message);
          } else {
            link.write(SLCAN_BELL);
          }
          break;
        }
        case 'open':
          channelOpen = true;
          link.write(SLCAN_OK);
          break;
        case 'close':
          channelOpen = false;
          link.write(SLCAN_OK);
          break;
        case 'version':
          link.write('V1013\r');
          break;
        case 'serial':
          link.write(`NSIM${node.toString().padStart(2, '0')}\r`);
          break;
        case 'status':
          link.write('F00\r');
          break;
        case 'bitrate':
        case 'btr':
        case 'timestamps':
          // Settings are only accepted while the channel is closed, as on real adapters.
          link.write(channelOpen ? SLCAN_BELL : SLCAN_OK);
          break;
        case 'empty':
          link.write(SLCAN_OK);
          break;
        default:
          link.write(SLCAN_BELL);
      }
    }
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
