// WebSocket stream clients for fanout.js, in their own process (forked; IPC). Opens N clients on
// the telemetry stream, counts the telemetry frames each receives (without parsing them; control
// frames are few and are parsed) and reports the counts when asked.
import WebSocket from 'ws';

const [url, nText, auth] = process.argv.slice(2);
const n = Number(nText);
const clients = [];
for (let i = 0; i < n; i++) {
  const ws = new WebSocket(url, auth ? { headers: { authorization: auth } } : {});
  const c = { ws, telemetry: 0, other: 0, lastDataAt: 0 };
  ws.on('message', (data) => {
    // Data frames start with '{"type":"telemetry"' (`{"type":"` is 9 bytes, then 't').
    if (data[9] === 0x74 && data[10] === 0x65 && data[11] === 0x6c) {
      c.telemetry++;
      c.lastDataAt = performance.timeOrigin + performance.now();
    } else c.other++;
  });
  clients.push(c);
}
await Promise.all(clients.map((c) => new Promise((r, j) => c.ws.once('open', r).once('error', j))));
process.send({ type: 'ready' });
process.on('message', (m) => {
  if (m.type === 'report') {
    process.send({ type: 'report', clients: clients.map((c) => ({ telemetry: c.telemetry, other: c.other, lastDataAt: c.lastDataAt })) });
  } else if (m.type === 'stop') {
    for (const c of clients) c.ws.close();
    setTimeout(() => process.exit(0), 100);
  }
});
