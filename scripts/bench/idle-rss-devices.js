// Idle RSS with 32 simulated devices attached (README.md § Benchmarks), target <= 60 MB (MiB here, as in run.js).
// Writes bench-results/idle-rss-devices.json. Needs the compiled agent (`npm run build`) and socat.
//
// BENCH_RSS_DEVICES (32) socat pty pairs (`socat pty,raw,echo=0,link=A pty,raw,echo=0,link=B`, as
// test/hal/helpers/socat-pair.ts makes them); a firmware-bridge serial emulator (sim/) on each B
// end, all in one child process, sending telemetry at 1 Hz; `svc serve` (its own process, no
// project) with SVC_HAL_SERIAL_PORTS naming the 32 A ends. Once GET /v1/devices lists all 32, the
// agent is left idle for 2 s and its VmRSS is read from /proc. Without socat the figure is skipped
// (reported, JSON says why).
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, serialDevicePairs } from './serial-ptys.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const N = Number(process.env.BENCH_RSS_DEVICES ?? 32);
const TARGET_MIB = 60;
const out = path.join(ROOT, 'bench-results', 'idle-rss-devices.json');
mkdirSync(path.dirname(out), { recursive: true });

if (spawnSync('socat', ['-V'], { stdio: 'ignore' }).status !== 0) {
  const reason = 'socat is not installed (apt-get install -y socat): idle RSS with 32 serial devices skipped';
  writeFileSync(out, JSON.stringify({ skipped: true, reason }, null, 2) + '\n');
  console.log(`\nidle RSS with ${N} devices: SKIPPED (${reason})`);
  process.exit(0);
}

const children = [];
const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-bench-rss-'));
const cleanup = () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM');
  try {
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  } catch {
    /* the agent may still be writing its state as it exits: leave the temp dir */
  }
};
process.on('exit', cleanup);
const watchdog = setTimeout(() => {
  console.error('idle-rss-devices: watchdog: still running after 90 s, giving up');
  process.exit(1);
}, 90_000);
watchdog.unref();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const agentEnds = await serialDevicePairs({ dir, n: N, children, idPrefix: 'rss-', deviceType: 'imu' });
const port = await freePort();
const started = performance.now();
const agent = spawn(process.execPath, [path.join(ROOT, 'bin', 'svc.js'), 'serve', '--bind', `127.0.0.1:${port}`], {
  env: { ...process.env, SVC_CONTROL_CENTER_STATE_DIR: path.join(dir, 'state'), SVC_HAL_SERIAL_PORTS: agentEnds.join(','), SVC_API_KEY: '' },
  stdio: ['ignore', 'ignore', 'pipe'],
});
children.push(agent);
let agentErr = '';
agent.stderr.on('data', (d) => (agentErr = (agentErr + d).slice(-4000)));

let devices = 0;
for (;;) {
  if (agent.exitCode !== null) throw new Error(`agent exited: ${agentErr}`);
  try {
    const res = await fetch(`http://127.0.0.1:${port}/v1/devices`);
    if (res.ok) {
      const body = await res.json();
      const list = Array.isArray(body) ? body : (body.devices ?? body.items ?? body.data ?? []);
      devices = list.filter((d) => String(d.id ?? d.device_id).startsWith('rss-')).length;
      if (devices >= N) break;
    }
  } catch {
    /* not listening yet */
  }
  if (performance.now() - started > 60_000) break;
  await sleep(100);
}
const attachedMs = Math.round(performance.now() - started);
await sleep(2000);
const status = readFileSync(`/proc/${agent.pid}/status`, 'utf8');
const kib = (k) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? NaN);
const rssMiB = kib('VmRSS') / 1024;
const result = {
  devices_attached: devices,
  devices_expected: N,
  transport: 'serial over socat pty pairs, firmware-bridge emulators at 1 Hz',
  attached_after_ms: attachedMs,
  idle_ms: 2000,
  rss_kib: kib('VmRSS'),
  rss_anon_kib: kib('RssAnon'),
  rss_file_kib: kib('RssFile'),
  hwm_kib: kib('VmHWM'),
  rss_mib: Number(rssMiB.toFixed(1)),
  target_mib: TARGET_MIB,
};
result.pass = devices === N && rssMiB <= TARGET_MIB;
writeFileSync(out, JSON.stringify(result, null, 2) + '\n');
const line = (k, v, t, ok) => console.log(`${k.padEnd(56)}${String(v).padEnd(34)}${t.padEnd(12)}${ok}`);
console.log(`\nidle RSS of \`svc serve\` with ${N} serial devices attached (socat ptys, emulators in another process)`);
line('devices attached (GET /v1/devices)', `${devices} / ${N} after ${attachedMs} ms`, '', devices === N ? 'PASS' : 'FAIL');
line('agent VmRSS 2 s after all devices attached', `${result.rss_mib} MiB`, '<= 60 MiB', rssMiB <= TARGET_MIB ? 'PASS' : 'FAIL');
line('anon / file / peak (info)', `${result.rss_anon_kib} / ${result.rss_file_kib} / ${result.hwm_kib} kB`, '', 'info');
process.exit(0);
