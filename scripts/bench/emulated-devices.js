// Emulated firmware-bridge devices for the benchmarks: one BridgeEndpoint per device on the agent's
// device hub, each fed by its own frame decoder as a serial attachment does. `offer(i, stamp)`
// encodes a TELEMETRY frame for device `i % n`, decodes it and hands it to the endpoint with the
// reading `sent_at` = `stamp` (epoch ms; default now). `pace(rate, shouldStop)` offers `rate` msg/s
// from a 1 ms timer until `shouldStop()` is true.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const { encodeMessage, FrameDecoder } = await import(path.join(ROOT, 'dist', 'firmware-bridge', 'frame.js'));
const { BridgeEndpoint } = await import(path.join(ROOT, 'dist', 'agent', 'devices', 'attachments', 'bridge-endpoint.js'));

export const epochNow = () => performance.timeOrigin + performance.now();

export function emulatedDevices(agent, n) {
  const hub = agent.services.deviceHub;
  const devices = [];
  for (let i = 0; i < n; i++) {
    const endpoint = new BridgeEndpoint(() => undefined, hub, { transport: 'serial', port: `/dev/bench${i}` });
    endpoint.deviceId = `bench-${i}`;
    hub.identity({ id: `bench-${i}`, device_type: 'imu', firmware_version: '1.0.0', protocol: 'svc-fw-bridge/1', transport: 'serial', port: `/dev/bench${i}` });
    devices.push({ endpoint, decoder: new FrameDecoder() });
  }
  let seq = 0;
  const offer = (i, stamp) => {
    const d = devices[i % n];
    const frame = encodeMessage({ type: 'telemetry', seq: seq++ & 0xffff, timestamp_ms: i, readings: [{ type: 'f32', name: 'sent_at', value: 0 }] });
    // The f32 field cannot carry an epoch-ms timestamp; patch the decoded message's value instead.
    for (const msg of d.decoder.push(frame)) {
      msg.readings[0].value = stamp ?? epochNow();
      d.endpoint.handle(msg);
    }
  };
  const pace = async (rate, shouldStop) => {
    const t0 = performance.now();
    let sent = 0;
    while (!shouldStop()) {
      const due = Math.floor(((performance.now() - t0) * rate) / 1000);
      for (; sent < due; sent++) offer(sent);
      await new Promise((r) => setTimeout(r, 1));
    }
    return sent;
  };
  return { offer, pace, ids: devices.map((d) => d.endpoint.deviceId) };
}
