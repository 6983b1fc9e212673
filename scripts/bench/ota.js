// OTA firmware rollout timings (docs/operations.md § Rollouts, "Measured timings").
// Writes bench-results/ota.json. Needs the compiled agent (`npm run build`) and socat.
//
// BENCH_OTA_DEVICES (8) socat pty pairs with a firmware-bridge serial emulator on each B end (all in
// one child process, as idle-rss-devices.js does), `svc serve` with SVC_HAL_SERIAL_PORTS naming the A
// ends, then one canary rollout (BENCH_OTA_CANARY_PERCENT, 25) of a BENCH_OTA_IMAGE_BYTES (16384)
// image with readiness gates: total time, per-device flash time, throughput.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, serialDevicePairs } from './serial-ptys.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const N = Number(process.env.BENCH_OTA_DEVICES ?? 8);
const IMAGE_BYTES = Number(process.env.BENCH_OTA_IMAGE_BYTES ?? 16384);
const CANARY = Number(process.env.BENCH_OTA_CANARY_PERCENT ?? 25);
const KEY = 'b0'.repeat(32);
const out = path.join(ROOT, 'bench-results', 'ota.json');
mkdirSync(path.dirname(out), { recursive: true });

if (spawnSync('socat', ['-V'], { stdio: 'ignore' }).status !== 0) {
  const reason = 'socat is not installed (apt-get install -y socat): OTA firmware rollout timings skipped';
  writeFileSync(out, JSON.stringify({ skipped: true, reason }, null, 2) + '\n');
  console.log(`\nOTA rollout: SKIPPED (${reason})`);
  process.exit(0);
}

const children = [];
const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-bench-ota-'));
process.on('exit', () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM');
  try {
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  } catch {
    /* the agent may still be writing its state as it exits: leave the temp dir */
  }
});
setTimeout(() => {
  console.error('ota bench: watchdog: still running after 120 s, giving up');
  process.exit(1);
}, 120_000).unref();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const agentEnds = await serialDevicePairs({ dir, n: N, children, idPrefix: 'ota-', deviceType: 'motor_controller' });
const port = await freePort();
const agent = spawn(process.execPath, [path.join(ROOT, 'bin', 'svc.js'), 'serve', '--bind', `127.0.0.1:${port}`], {
  env: { ...process.env, SVC_CONTROL_CENTER_STATE_DIR: path.join(dir, 'state'), SVC_HAL_SERIAL_PORTS: agentEnds.join(','), SVC_API_KEY: KEY },
  stdio: ['ignore', 'ignore', 'pipe'],
});
children.push(agent);
const base = `http://127.0.0.1:${port}`;
const auth = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
const ids = Array.from({ length: N }, (_, i) => `ota-${i}`);
for (const started = Date.now(); ; ) {
  try {
    const body = await (await fetch(`${base}/v1/devices`, { headers: auth })).json();
    if (ids.every((id) => body.devices?.some((d) => d.id === id && d.firmware_version === '1.0.0'))) break;
  } catch {
    /* not listening yet */
  }
  if (Date.now() - started > 60_000) throw new Error('devices did not attach within 60 s');
  await sleep(100);
}

const image = Buffer.from(Array.from({ length: IMAGE_BYTES }, (_, i) => (i * 13 + 5) & 0xff)).toString('base64');
const t0 = performance.now();
const res = await fetch(`${base}/v1/ota/execute`, {
  method: 'POST',
  headers: auth,
  body: JSON.stringify({ strategy: 'canary', version: 'bench', canary_percent: CANARY, rollback_on_readiness_fail: true, firmware: { version: '2.0.0', device_ids: ids, image_base64: image } }),
});
const totalMs = Math.round(performance.now() - t0);
const reply = await res.json();
const steps = reply.rollout?.steps ?? [];
const perDevice = steps.map((s) => s.duration_ms ?? 0);
const mean = perDevice.reduce((a, b) => a + b, 0) / Math.max(1, perDevice.length);
const result = {
  devices: N,
  image_bytes: IMAGE_BYTES,
  canary_percent: CANARY,
  success: reply.rollout?.success === true,
  deployed: steps.filter((s) => s.status === 'deployed').length,
  batches: reply.rollout?.batches,
  total_ms: totalMs,
  per_device_flash_ms: perDevice,
  per_device_flash_mean_ms: Math.round(mean),
  delivered_kib_per_s: Math.round((IMAGE_BYTES * N) / 1024 / (totalMs / 1000)),
};
writeFileSync(out, JSON.stringify(result, null, 2) + '\n');
console.log(`\nOTA canary firmware rollout: ${N} emulated serial devices, ${IMAGE_BYTES} B image, canary ${CANARY} %`);
console.log(`  success ${result.success}, ${result.deployed}/${N} deployed in ${result.batches?.length} batches`);
console.log(`  total ${totalMs} ms; per-device flash mean ${result.per_device_flash_mean_ms} ms (${perDevice.join('/')}); ${result.delivered_kib_per_s} KiB/s delivered`);
process.exit(result.success ? 0 : 1);
