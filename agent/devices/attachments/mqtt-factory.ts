import type { HalSettings } from '../hal-settings.js';
import type { AttachmentFactory } from '../device-hub.js';
import { MqttAttachment } from './mqtt-attachment.js';

/** The configured broker (`SVC_HAL_MQTT_URL` / `[hal] mqtt_url`), when there is one. */
export function mqttFactory(hal: HalSettings): AttachmentFactory {
  return {
    transport: 'mqtt',
    targets: async () => (hal.mqttUrl ? [hal.mqttUrl] : []),
    async open(target, sink, timeoutMs) {
      const a = new MqttAttachment(target, hal.mqttPrefix, sink);
      try {
        await a.start(timeoutMs);
      } catch (err) {
        await a.close();
        throw err;
      }
      return a;
    },
  };
}
