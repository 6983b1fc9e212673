// Lightweight simulated agents for scripts/bench/relay.js (its own process, so the relay's RSS is the
// relay's alone): each is one MQTT connection that does what an idle agent does on the trunk
// (api/relay-protocol.ts) — enrollment token as password, 30 s keep-alive, a retained offline Last
// Will, retained online presence, a subscription to its request topic — and nothing more.
// Reads batches of `[{agent_id, token}]` (one JSON array per line) on stdin; after each batch prints
// `{"connected": n, "failed": n}`.
import mqtt from 'mqtt';
import readline from 'node:readline';

const url = process.argv[2];
const TENANT = process.env.BENCH_RELAY_TENANT ?? 'default';
let connected = 0;
let failed = 0;
const clients = [];

function connectOne({ agent_id: agentId, token }) {
  const root = `svc/t/${TENANT}/a/${agentId}`;
  const presence = (online) => JSON.stringify({ agent_id: agentId, tenant_id: TENANT, online, agent_version: 'bench', connected_since_ms: online ? Date.now() : null, last_seen_ms: Date.now() });
  return new Promise((resolve) => {
    const client = mqtt.connect(url, {
      clientId: `agent:${TENANT}:${agentId}`,
      username: agentId,
      password: token,
      keepalive: 30,
      reconnectPeriod: 0,
      connectTimeout: 30_000,
      will: { topic: `${root}/status`, payload: Buffer.from(presence(false)), qos: 1, retain: true },
    });
    client.once('connect', () => {
      client.subscribe(`${root}/req`, { qos: 1 });
      client.publish(`${root}/status`, presence(true), { qos: 1, retain: true });
      connected++;
      clients.push(client);
      resolve();
    });
    client.once('error', () => {
      failed++;
      client.end(true);
      resolve();
    });
  });
}

const rl = readline.createInterface({ input: process.stdin });
rl.on('line', async (line) => {
  const batch = JSON.parse(line);
  // Bounded parallel connects: a burst of thousands of CONNECTs would measure the burst, not idling.
  for (let i = 0; i < batch.length; i += 200) await Promise.all(batch.slice(i, i + 200).map(connectOne));
  process.stdout.write(`${JSON.stringify({ connected, failed })}\n`);
});
