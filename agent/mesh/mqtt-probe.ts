import { MqttLink } from '../../hal/index.js';
import type { ProbeResult } from './mesh-service.js';

/**
 * Live MQTT discovery probe: opens one session with the HAL's MQTT client (no reconnect) and measures
 * the time from the TCP connect to the broker's CONNACK. `broker` is `host:port` or an `mqtt://` URL.
 */
export async function probeMqttBroker(broker: string, timeoutMs: number): Promise<ProbeResult> {
  const url = /^[a-z]+:\/\//.test(broker) ? broker : `mqtt://${broker}`;
  let link: MqttLink;
  try {
    link = new MqttLink({ url, reconnect: false, connectTimeoutMs: timeoutMs, clientId: `svc-mesh-probe-${Math.random().toString(16).slice(2, 10)}` });
  } catch (err) {
    return { ok: false, error: (err as Error).message };
  }
  const started = performance.now();
  const result = await new Promise<ProbeResult>((resolve) => {
    const timer = setTimeout(() => resolve({ ok: false, error: `no CONNACK within ${timeoutMs} ms` }), timeoutMs);
    link.on('state', (to) => {
      if (to === 'open') {
        clearTimeout(timer);
        resolve({ ok: true, latency_ms: Math.max(1, Math.round(performance.now() - started)) });
      } else if (to === 'closed' || to === 'backoff') {
        clearTimeout(timer);
        resolve({ ok: false, error: link.stats().last_error ?? `link ${to}` });
      }
    });
    link.on('error', () => undefined);
    link.start();
  });
  await link.close().catch(() => undefined);
  return result;
}
