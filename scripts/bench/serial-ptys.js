// Emulated serial devices on socat pseudo-terminal pairs, for the benches that need a real serial path
// (idle-rss-devices.js, ota.js): `n` pty pairs under `dir`, one firmware-bridge emulator on each device
// end (all in one child process), and the agent ends to hand to SVC_HAL_SERIAL_PORTS. Every process
// started is pushed to `children` so the caller's exit handler can stop it. Needs `npm run build`.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export async function serialDevicePairs({ dir, n, children, idPrefix, deviceType, firmwareVersion = '1.0.0' }) {
  const agentEnds = [];
  const deviceEnds = [];
  for (let i = 0; i < n; i++) {
    const a = path.join(dir, `agent${i}`);
    const b = path.join(dir, `dev${i}`);
    children.push(spawn('socat', [`pty,raw,echo=0,link=${a}`, `pty,raw,echo=0,link=${b}`], { stdio: 'ignore' }));
    agentEnds.push(a);
    deviceEnds.push(b);
  }
  for (let t = 0; !(agentEnds.every(existsSync) && deviceEnds.every(existsSync)); t++) {
    if (t > 500) throw new Error('socat links did not appear');
    await sleep(10);
  }
  const emulatorCode = `
    const { startSerialEmulator } = await import(${JSON.stringify(path.join(ROOT, 'dist', 'sim', 'serial-emulator.js'))});
    const ends = ${JSON.stringify(deviceEnds)};
    await Promise.all(ends.map((p, i) => startSerialEmulator(p, { id: ${JSON.stringify(idPrefix)} + i, deviceType: ${JSON.stringify(deviceType)}, firmwareVersion: ${JSON.stringify(firmwareVersion)}, rateHz: 1, faults: [], seed: i })));
    console.log('emulators ready');
    setInterval(() => {}, 1 << 30);
  `;
  const emulators = spawn(process.execPath, ['--input-type=module', '-e', emulatorCode], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(emulators);
  await new Promise((resolve, reject) => {
    emulators.stdout.on('data', (d) => String(d).includes('emulators ready') && resolve());
    emulators.on('exit', (code) => reject(new Error(`emulators exited (${code})`)));
  });
  return agentEnds;
}

/** A loopback TCP port free at the time of the call. */
export function freePort() {
  return new Promise((r) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = s.address().port;
      s.close(() => r(p));
    });
  });
}
