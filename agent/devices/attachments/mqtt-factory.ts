import type { HalSettings } from '../../settings/hal.js';
import type { AttachmentFactory } from '../device-hub.js';

/** The configured broker (`SVC_HAL_MQTT_URL` / `[hal] mqtt_url`), when there is one. */
export function mqttFactory(hal: HalSettings): AttachmentFactory {
  return {
    transport: 'mqtt',
    targets: async () => (hal.mqttUrl ? [hal.mqttUrl] : []),
    async open(target, sink, timeoutMs) {
      const { MqttAttachment } = await import('./mqtt-attachment.js');
      const a = new MqttAttachment(target, hal.mqttPrefix, sink);
      // A target that is not there yet stays attached: its link keeps retrying and the devices
      // behind it are found when it comes up.
      await a.start(timeoutMs).catch((err: Error) => sink.note?.(`${target}: ${err.message}`));
      return a;
    },
  };
}
