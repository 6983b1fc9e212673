// Bare `node:http` reference server for the health-throughput ratio (README.md § Benchmarks).
//
// It answers `GET /v1/health` with the body and header set captured from the agent's own
// health response (passed in BENCH_HEALTH as JSON: { headers: [[name, value], ...], body }),
// so both servers put the same number of headers and (near enough) the same bytes on the wire.
// Node adds Date, Connection and Keep-Alive itself, exactly as it does for the agent.
// Prints `listening <port>` on stdout once bound.
import http from 'node:http';

const spec = JSON.parse(process.env.BENCH_HEALTH ?? '{}');
const body = Buffer.from(spec.body ?? '{"ok":true}');
/** @type {string[]} flat [name, value, name, value, ...] like rawHeaders; keeps the agent's casing. */
const headers = [];
for (const [name, value] of spec.headers ?? [['content-type', 'application/json; charset=utf-8']]) headers.push(name, value);
if (!headers.some((h, i) => i % 2 === 0 && h.toLowerCase() === 'content-length')) headers.push('Content-Length', String(body.length));

const notFound = Buffer.from('{"error":"not_found"}');
const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/v1/health') {
    res.writeHead(200, headers);
    res.end(body);
    return;
  }
  res.writeHead(404, ['content-type', 'application/json', 'Content-Length', String(notFound.length)]);
  res.end(notFound);
});

const [host, portText] = (process.argv[2] ?? '127.0.0.1:0').split(':');
server.listen(Number(portText), host, () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});
const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
