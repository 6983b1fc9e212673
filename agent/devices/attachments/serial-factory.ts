import type { AttachmentFactory } from '../device-hub.js';
import type { HalSettings } from '../../settings/hal.js';

/**
 * Serial lines named by `SVC_HAL_SERIAL_PORTS` / `[hal] serial_ports` (paths or globs). Only
 * configured lines are probed: saying HELLO to an arbitrary /dev/ttyUSB* could disturb a device
 * that speaks another protocol.
 */
export function serialFactory(hal: HalSettings): AttachmentFactory {
  return {
    transport: 'serial',
    async targets() {
      if (hal.serialPorts.length === 0) return [];
      const { discoverSerialPorts } = await import('../../../hal/index.js');
      const found = await discoverSerialPorts({ patterns: hal.serialPorts, defaults: false, useList: false });
      return found.ports.map((p) => p.path);
    },
    async open(target, sink, timeoutMs) {
      // Transport code (and its native addon) loads only when a line is configured.
      const { SerialAttachment } = await import('./serial-attachment.js');
      const a = new SerialAttachment(target, hal.serialBaudRate, sink);
      // A target that is not there yet stays attached: its link keeps retrying and the devices
      // behind it are found when it comes up.
      await a.open(timeoutMs).catch((err: Error) => sink.note?.(`${target}: ${err.message}`));
      return a;
    },
  };
}
