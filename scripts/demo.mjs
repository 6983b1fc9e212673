// `npm start`: the agent on 127.0.0.1:8080 with the demo project, plus emulated devices speaking
// the real protocols over real transports when this machine has the tools for them:
//   - socat  -> pseudo-terminal pairs: an IMU on a serial line, a drive controller behind a USB-CAN (SLCAN) adapter;
//   - mosquitto -> a local broker: an air-quality probe over MQTT.
// Without them the agent still starts with the project's configured devices and says what it skipped.
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const svc = path.join(root, 'bin', 'svc.js');
const bind = process.env.SVC_DEMO_BIND ?? '127.0.0.1:8080';
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-demo-'));
const children = [];
const has = (cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
const run = (cmd, args, opts = {}) => {
  const child = spawn(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'], ...opts });
  children.push(child);
  return child;
};
const until = async (check, ms = 5000) => {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
};
const freePort = () =>
  new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

const env = { ...process.env };
const sims = [];

// The web panel (docs/panel.md) signs in with an API key: without one configured, the demo makes an
// administrator key for this run and prints it.
if (!env.SVC_API_KEY && !env.SVC_API_KEYS_FILE) env.SVC_API_KEY = crypto.randomBytes(32).toString('hex');
const panelKey = process.env.SVC_API_KEY || process.env.SVC_API_KEYS_FILE ? '(your SVC_API_KEY or a key of SVC_API_KEYS_FILE)' : `the demo's administrator key ${env.SVC_API_KEY}`;

if (has('socat')) {
  for (const name of ['imu', 'can']) {
    const a = path.join(work, `${name}-agent`);
    const d = path.join(work, `${name}-device`);
    run('socat', [`pty,raw,echo=0,link=${a}`, `pty,raw,echo=0,link=${d}`], { stdio: 'ignore' });
    await until(() => fs.existsSync(a) && fs.existsSync(d));
  }
  env.SVC_HAL_SERIAL_PORTS = path.join(work, 'imu-agent');
  env.SVC_HAL_SLCAN_PORTS = path.join(work, 'can-agent');
  sims.push(['--serial', path.join(work, 'imu-device'), '--id', 'sentinel-imu', '--type', 'imu', '--firmware', '2.4.1']);
  sims.push(['--slcan', path.join(work, 'can-device'), '--id', 'sentinel-drive-ctrl', '--node', '33', '--type', 'motor_controller', '--firmware', '1.9.0']);
} else {
  console.log('demo: socat not found; serial and SLCAN emulated devices skipped (apt-get install -y socat)');
}

if (has('mosquitto')) {
  const port = await freePort();
  const conf = path.join(work, 'mosquitto.conf');
  fs.writeFileSync(conf, `listener ${port} 127.0.0.1\nallow_anonymous true\nset_tcp_nodelay true\npersistence false\n${process.getuid?.() === 0 ? 'user root\n' : ''}`);
  run('mosquitto', ['-c', conf], { stdio: 'ignore' });
  await until(() => new Promise((r) => net.connect(port, '127.0.0.1').on('connect', function () { this.destroy(); r(true); }).on('error', () => r(false))));
  env.SVC_HAL_MQTT_URL = `mqtt://127.0.0.1:${port}`;
  sims.push(['--mqtt', env.SVC_HAL_MQTT_URL, '--id', 'sentinel-air-probe', '--type', 'environment', '--firmware', '3.0.2']);
} else {
  console.log('demo: mosquitto not found; the MQTT emulated device is skipped (apt-get install -y mosquitto)');
}

for (const args of sims) run(process.execPath, [svc, 'sim-device', ...args, '--rate', '1']);
console.log(`demo: web panel at http://${bind}/ — sign in with ${panelKey}`);
run(process.execPath, [svc, 'serve', '--config', 'demo/svc.toml', '--program', 'demo/programs/patrol.sd', '--bind', bind], { cwd: root, env });

const stop = () => {
  for (const c of children.reverse()) c.kill('SIGTERM');
  setTimeout(() => {
    fs.rmSync(work, { recursive: true, force: true });
    process.exit(0);
  }, 500);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
children.at(-1).on('exit', (code) => {
  for (const c of children) c.kill('SIGTERM');
  fs.rmSync(work, { recursive: true, force: true });
  process.exit(code ?? 0);
});
