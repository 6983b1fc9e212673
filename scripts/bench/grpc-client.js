// Load side of `npm run bench`'s gRPC figures, run as its own process so client work does not share
// the agent's event loop. Loads the checked-in .proto like any client would.
//   node grpc-client.js unary  <host:port> <token> <durationMs> <concurrency>
//   node grpc-client.js stream <host:port> <token> <clients> <idleMs>
// Prints one JSON line with the result on stdout ("ready" first for stream mode).
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const require = createRequire(path.join(ROOT, 'package.json'));
const protoLoader = require('@grpc/proto-loader');
const { createChannel, createClient, Metadata } = require('nice-grpc');

const [mode, address, token, a, b] = process.argv.slice(2);
const pkg = protoLoader.loadSync(path.join(ROOT, 'proto/svc/v1/control_center.proto'), { keepCase: true, longs: Number, defaults: true });
const definition = pkg['svc.v1.ControlCenter'];
const metadata = new Metadata();
metadata.set('authorization', `Bearer ${token}`);

function percentile(sorted, p) {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : null;
}

if (mode === 'unary') {
  const durationMs = Number(a);
  const concurrency = Number(b);
  const channel = createChannel(address);
  const client = createClient(definition, channel);
  // Warm-up: connection, first-call compilation paths.
  for (let i = 0; i < 200; i++) await client.GetDashboard({}, { metadata });
  const latencies = [];
  let errors = 0;
  const started = performance.now();
  const until = started + durationMs;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) {
        const t = performance.now();
        try {
          await client.GetDashboard({}, { metadata });
          latencies.push(performance.now() - t);
        } catch {
          errors++;
        }
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((x, y) => x - y);
  channel.close();
  console.log(JSON.stringify({ calls: latencies.length, errors, seconds: elapsed, p50_ms: percentile(latencies, 50), p99_ms: percentile(latencies, 99) }));
} else if (mode === 'stream') {
  const clients = Number(a);
  const idleMs = Number(b);
  const counts = new Array(clients).fill(0);
  let first = 0;
  let last = 0;
  let maxDropped = 0;
  const aborts = [];
  const runs = [];
  for (let i = 0; i < clients; i++) {
    // One channel (one HTTP/2 connection) per subscriber, as separate clients would have.
    const channel = createChannel(address);
    const client = createClient(definition, channel);
    const ac = new AbortController();
    aborts.push({ ac, channel });
    runs.push(
      (async () => {
        try {
          for await (const f of client.StreamEvents({ event_types: ['MetricEmitted'] }, { metadata, signal: ac.signal })) {
            const now = performance.now();
            if (!first) first = now;
            last = now;
            counts[i]++;
            if (f.dropped > maxDropped) maxDropped = f.dropped;
          }
        } catch {
          /* aborted at the end */
        }
      })(),
    );
  }
  console.log('ready');
  // Finish once nothing arrived for idleMs after the first frame.
  await new Promise((resolve) => {
    const timer = setInterval(() => {
      if (first && performance.now() - last > idleMs) {
        clearInterval(timer);
        resolve();
      }
    }, 50);
  });
  for (const { ac, channel } of aborts) {
    ac.abort();
    channel.close();
  }
  await Promise.allSettled(runs);
  const total = counts.reduce((x, y) => x + y, 0);
  console.log(JSON.stringify({ clients, received: total, per_client_min: Math.min(...counts), seconds: (last - first) / 1000, max_dropped: maxDropped }));
  process.exit(0);
} else {
  console.error('usage: grpc-client.js unary|stream ...');
  process.exit(2);
}
