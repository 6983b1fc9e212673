// Open-loop, rate-paced HTTP/1.1 load generator (run as its own process). Unlike loadgen.js
// (closed loop: each connection sends its next request when the previous answer arrived), requests
// are due at fixed times (`rate` per second) whether or not earlier ones were answered, so a slow
// server cannot slow the offered load down and hide its own latency (no coordinated omission).
// Latency is measured from each request's SCHEDULED time to the last byte of its response.
//
// A 1 ms timer wakes the generator; every request whose time has come is written on an idle
// keep-alive connection (a new connection is opened when none is idle, up to `maxConnections`;
// beyond that requests wait in a queue, and the wait counts in their latency).
//
// Usage: node open-loop.js <host> <port> <path> <rate> <warmupMs> <durationMs> [maxConnections]
// Env: OPEN_LOOP_AUTH: value of an Authorization header sent with every request.
// Prints one JSON object on stdout.
import net from 'node:net';

const [host, portText, path, rateText, warmText, durText, maxConnText] = process.argv.slice(2);
const port = Number(portText);
const rate = Number(rateText ?? 1000);
const warmupMs = Number(warmText ?? 1000);
const durationMs = Number(durText ?? 5000);
const maxConnections = Number(maxConnText ?? 64);
const auth = process.env.OPEN_LOOP_AUTH;

const request = Buffer.from(
  `GET ${path} HTTP/1.1\r\nHost: ${host}:${port}\r\nAccept: application/json\r\n${auth ? `Authorization: ${auth}\r\n` : ''}Connection: keep-alive\r\n\r\n`,
  'latin1',
);
const HEADER_END = Buffer.from('\r\n\r\n');
const interval = 1000 / rate;
const total = Math.round((rate * (warmupMs + durationMs)) / 1000);
const firstMeasured = Math.round((rate * warmupMs) / 1000);

const latency = new Float64Array(total); // ms, by request index; NaN = no answer
latency.fill(NaN);
const statusOf = new Uint16Array(total);
const idle = [];
const queue = []; // request indices due but not yet written
let connections = 0;
let errors = 0;
let answered = 0;
let t0 = 0;

function open() {
  connections++;
  const socket = net.connect({ host, port, noDelay: true });
  const conn = { socket, index: -1, buf: null, need: -1, status: 0, ready: false };
  socket.on('connect', () => {
    conn.ready = true;
    release(conn);
  });
  socket.on('data', (chunk) => {
    conn.buf = conn.buf === null ? chunk : Buffer.concat([conn.buf, chunk]);
    if (conn.need < 0) {
      const idx = conn.buf.indexOf(HEADER_END);
      if (idx < 0) return;
      const head = conn.buf.latin1Slice(0, idx);
      conn.status = Number(head.slice(9, 12));
      const m = /\r\ncontent-length:[ \t]*(\d+)/i.exec(head);
      if (!m) {
        process.stderr.write(`open-loop: response without Content-Length is not supported:\n${head}\n`);
        process.exit(3);
      }
      conn.need = idx + 4 + Number(m[1]);
    }
    if (conn.buf.length < conn.need) return;
    const i = conn.index;
    latency[i] = performance.now() - (t0 + i * interval);
    statusOf[i] = conn.status;
    answered++;
    conn.buf = null; // one request in flight per connection: nothing follows the response
    conn.need = -1;
    conn.index = -1;
    release(conn);
  });
  socket.on('error', () => errors++);
  socket.on('close', () => {
    connections--;
    const at = idle.indexOf(conn);
    if (at >= 0) idle.splice(at, 1);
  });
}

function release(conn) {
  if (queue.length > 0) write(conn, queue.shift());
  else idle.push(conn);
}

function write(conn, i) {
  conn.index = i;
  conn.socket.write(request);
}

function dispatch(i) {
  const conn = idle.pop();
  if (conn) write(conn, i);
  else {
    queue.push(i);
    if (connections < maxConnections) open();
  }
}

for (let i = 0; i < Math.min(8, maxConnections); i++) open();
await new Promise((r) => setTimeout(r, 200));

t0 = performance.now();
let next = 0;
const cpu0 = process.cpuUsage();
let maxLag = 0;
await new Promise((resolve) => {
  const tick = () => {
    const now = performance.now();
    const due = Math.min(total, Math.floor((now - t0) / interval) + 1);
    if (next < due) maxLag = Math.max(maxLag, now - (t0 + next * interval));
    while (next < due) dispatch(next++);
    if (next < total) setTimeout(tick, 1);
    else resolve();
  };
  tick();
});
// Let the last requests finish (bounded).
const deadline = performance.now() + 5000;
while (answered < total && performance.now() < deadline) await new Promise((r) => setTimeout(r, 10));
const cpu = process.cpuUsage(cpu0);

const measured = latency.subarray(firstMeasured);
let ok = 0;
let non2xx = 0;
let missing = 0;
for (let i = firstMeasured; i < total; i++) {
  if (Number.isNaN(latency[i])) missing++;
  else if (statusOf[i] >= 200 && statusOf[i] < 300) ok++;
  else non2xx++;
}
// Unanswered requests count as slower than anything answered.
const sorted = Float64Array.from(measured, (v) => (Number.isNaN(v) ? Infinity : v)).sort();
const n = sorted.length;
const pct = (p) => Number(sorted[Math.min(n - 1, Math.floor((p / 100) * n))].toFixed(3));
process.stdout.write(
  JSON.stringify({
    rate,
    warmupMs,
    durationMs,
    requests: n,
    ok,
    non2xx,
    missing,
    errors,
    connectionsOpened: connections,
    achievedRate: Math.round(n / (durationMs / 1000)),
    latencyMs: { p50: pct(50), p90: pct(90), p99: pct(99), p999: pct(99.9), max: pct(100) },
    generatorMaxLagMs: Number(maxLag.toFixed(2)),
    generatorCpu: (cpu.user + cpu.system) / 1000 / (performance.now() - t0),
  }) + '\n',
);
process.exit(0);
