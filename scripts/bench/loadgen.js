// Keep-alive HTTP/1.1 load generator used by run.js (run as its own process, pinned to the
// core the server is NOT on).
//
// Why a hand-written generator rather than autocannon or a `node:http` Agent client:
// - no new dependency (package.json / package-lock.json are shared with other engineers and
//   the bench must run from a plain `npm ci`);
// - it writes one pre-serialised request per connection over raw `net` sockets and parses only
//   the status line and Content-Length of the response, which is what autocannon does too; a
//   `node:http` client would spend about as much CPU per request as the server under test and
//   could become the bottleneck on a 2-core machine. The generator reports its own CPU use and
//   the server's, so a run where the generator (not the server) saturated is visible.
// - one request in flight per connection (no pipelining), N connections, fixed warm-up then a
//   fixed measurement window; latency = send to last byte of the response.
//
// Usage: node loadgen.js <host> <port> <path> <connections> <warmupMs> <durationMs> [serverPid]
// Prints one JSON object on stdout.
import net from 'node:net';
import { readFileSync } from 'node:fs';

const [host, portText, path, connText, warmText, durText, serverPidText] = process.argv.slice(2);
const port = Number(portText);
const connections = Number(connText ?? 10);
const warmupMs = Number(warmText ?? 1000);
const durationMs = Number(durText ?? 5000);
const serverPid = serverPidText ? Number(serverPidText) : null;
const tickMs = 1000 / Number(process.env.CLK_TCK ?? 100);

const request = Buffer.from(`GET ${path} HTTP/1.1\r\nHost: ${host}:${port}\r\nAccept: */*\r\nConnection: keep-alive\r\n\r\n`, 'latin1');
const HEADER_END = Buffer.from('\r\n\r\n');

let measuring = false;
let stopped = false;
let ok = 0;
let non2xx = 0;
let errors = 0;
let reconnects = 0;
let bytesIn = 0;
let warmupResponses = 0;
let lat = new Float64Array(1 << 17);
let latN = 0;
let responseBytes = 0;
let responseHeadBytes = 0;

function record(us) {
  if (latN === lat.length) {
    const next = new Float64Array(lat.length * 2);
    next.set(lat);
    lat = next;
  }
  lat[latN++] = us;
}

function serverCpuTicks() {
  if (!serverPid) return null;
  try {
    const stat = readFileSync(`/proc/${serverPid}/stat`, 'latin1');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]); // utime + stime (fields 14, 15)
  } catch {
    return null;
  }
}

/** Busy and steal ticks of the whole machine (all CPUs) from /proc/stat. */
function machineTicks() {
  try {
    const f = readFileSync('/proc/stat', 'latin1').split('\n', 1)[0].trim().split(/\s+/).slice(1).map(Number);
    const [user, nice, system, idle, iowait, irq, softirq, steal] = f;
    return { busy: user + nice + system + irq + softirq, steal: steal ?? 0, idle: idle + iowait };
  } catch {
    return null;
  }
}

function open() {
  const socket = net.connect({ host, port, noDelay: true });
  let buf = null;
  let need = -1;
  let status = 0;
  let sentAt = 0n;
  const send = () => {
    if (stopped) return;
    sentAt = process.hrtime.bigint();
    socket.write(request);
  };
  socket.on('connect', send);
  socket.on('data', (chunk) => {
    if (measuring) bytesIn += chunk.length;
    buf = buf === null ? chunk : Buffer.concat([buf, chunk]);
    for (;;) {
      if (need < 0) {
        const idx = buf.indexOf(HEADER_END);
        if (idx < 0) return;
        const head = buf.latin1Slice(0, idx);
        status = Number(head.slice(9, 12));
        const m = /\r\ncontent-length:[ \t]*(\d+)/i.exec(head);
        if (!m) {
          process.stderr.write(`loadgen: response without Content-Length is not supported:\n${head}\n`);
          process.exit(3);
        }
        responseHeadBytes = idx + 4;
        need = idx + 4 + Number(m[1]);
      }
      if (buf.length < need) return;
      const done = process.hrtime.bigint();
      responseBytes = need;
      buf = buf.length > need ? buf.subarray(need) : null;
      need = -1;
      if (measuring) {
        if (status >= 200 && status < 300) ok++;
        else non2xx++;
        record(Number(done - sentAt) / 1000);
      } else if (!stopped) warmupResponses++;
      send();
      if (buf === null) return;
    }
  });
  socket.on('error', () => {
    if (!stopped) errors++;
  });
  socket.on('close', () => {
    if (stopped) return;
    reconnects++;
    setTimeout(open, 10);
  });
  sockets.add(socket);
  socket.on('close', () => sockets.delete(socket));
}

const sockets = new Set();
for (let i = 0; i < connections; i++) open();

setTimeout(() => {
  const cpu0 = process.cpuUsage();
  const ticks0 = serverCpuTicks();
  const mach0 = machineTicks();
  const t0 = process.hrtime.bigint();
  errors = 0;
  reconnects = 0;
  measuring = true;
  setTimeout(() => {
    measuring = false;
    stopped = true;
    const elapsedMs = Number(process.hrtime.bigint() - t0) / 1e6;
    const cpu = process.cpuUsage(cpu0);
    const ticks1 = serverCpuTicks();
    const mach1 = machineTicks();
    for (const s of sockets) s.destroy();
    const sorted = lat.subarray(0, latN).sort();
    const pct = (p) => (latN ? sorted[Math.min(latN - 1, Math.floor((p / 100) * latN))] / 1000 : null);
    let sum = 0;
    for (let i = 0; i < latN; i++) sum += sorted[i];
    const result = {
      connections,
      warmupMs,
      durationMs: Math.round(elapsedMs),
      // Monotonic clock (same as V8 profile timestamps), to cut a --cpu-prof profile to the window.
      windowStartUs: Number(t0 / 1000n),
      windowEndUs: Number(t0 / 1000n) + Math.round(elapsedMs * 1000),
      warmupResponses,
      requests: ok + non2xx,
      ok,
      non2xx,
      errors,
      reconnects,
      rps: (ok + non2xx) / (elapsedMs / 1000),
      bytesPerSec: bytesIn / (elapsedMs / 1000),
      responseBytes,
      responseHeadBytes,
      latencyMs: {
        mean: latN ? sum / latN / 1000 : null,
        p50: pct(50),
        p90: pct(90),
        p99: pct(99),
        max: latN ? sorted[latN - 1] / 1000 : null,
      },
      // Fraction of one core each side used during the window (1.0 = one core saturated).
      generatorCpu: (cpu.user + cpu.system) / 1000 / elapsedMs,
      serverCpu: ticks0 !== null && ticks1 !== null ? ((ticks1 - ticks0) * tickMs) / elapsedMs : null,
      // Whole machine, in cores: busy includes kernel networking work for both sides.
      machineBusy: mach0 && mach1 ? ((mach1.busy - mach0.busy) * tickMs) / elapsedMs : null,
      machineSteal: mach0 && mach1 ? ((mach1.steal - mach0.steal) * tickMs) / elapsedMs : null,
    };
    // CPU used by anything other than the server and this generator (other processes, softirq).
    result.otherCpu = result.machineBusy !== null && result.serverCpu !== null ? Math.max(0, result.machineBusy - result.serverCpu - result.generatorCpu) : null;
    process.stdout.write(JSON.stringify(result) + '\n');
    process.exit(0);
  }, durationMs);
}, warmupMs);
