import type { AttachmentFactory } from '../device-hub.js';
import type { HalSettings } from '../../settings/hal.js';
import type { CanBus } from './can-attachment.js';

/**
 * CAN buses: SLCAN adapters on the serial lines of `SVC_HAL_SLCAN_PORTS` (targets `slcan:<path>`) and
 * SocketCAN interfaces of `SVC_HAL_CAN_INTERFACES` (targets `socketcan:<iface>`).
 */
export function canFactory(hal: HalSettings): AttachmentFactory {
  return {
    transport: 'can',
    async targets() {
      const { discoverSerialPorts } = await import('../../../hal/index.js');
      const slcan = hal.slcanPorts.length
        ? (await discoverSerialPorts({ patterns: hal.slcanPorts, defaults: false, useList: false })).ports.map((p) => `slcan:${p.path}`)
        : [];
      return [...slcan, ...hal.canInterfaces.map((i) => `socketcan:${i}`)];
    },
    async open(target, sink, timeoutMs) {
      // Transport code loads only when a bus is configured.
      const { CanAttachment } = await import('./can-attachment.js');
      const { SlcanLink, SocketCanLink } = await import('../../../hal/index.js');
      const [kind, name] = [target.slice(0, target.indexOf(':')), target.slice(target.indexOf(':') + 1)];
      const bus: CanBus =
        kind === 'slcan'
          ? (new SlcanLink({ path: name, bitrate: hal.canBitrate }) as unknown as CanBus)
          : (new SocketCanLink({ interface: name }) as unknown as CanBus);
      const a = new CanAttachment(kind === 'slcan' ? 'slcan' : 'socketcan', name, bus, sink);
      // A target that is not there yet stays attached: its link keeps retrying and the devices
      // behind it are found when it comes up.
      await a.open(timeoutMs).catch((err: Error) => sink.note?.(`${target}: ${err.message}`));
      return a;
    },
  };
}
