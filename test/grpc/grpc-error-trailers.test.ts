import { Status } from 'nice-grpc';
import { afterEach, describe, expect, it } from 'vitest';
import { startAgent, type RunningAgent } from '../helpers/agent-harness.js';
import { callUnary, connectGrpc, type GrpcTestClient } from '../helpers/grpc-client.js';

/**
 * Error trailers are ASCII-safe and bounded (docs/grpc.md, "Errors"). Before: a non-ASCII character
 * in an error message turned the status into UNKNOWN (REST said 404), and a 64 KiB id produced trailers
 * past the HTTP/2 header-list limit, so the call never got a status and stalled the connection.
 */
const KEY = 'f3'.repeat(32);
let agents: RunningAgent[] = [];
let clients: GrpcTestClient[] = [];
afterEach(async () => {
  for (const c of clients) c.close();
  clients = [];
  await Promise.all(agents.map((a) => a.close()));
  agents = [];
});
async function grpcAgent() {
  const a = await startAgent({ env: { SVC_API_KEY: KEY }, grpcBind: '127.0.0.1:0' });
  agents.push(a);
  const g = connectGrpc(a.agent.grpcAddress!);
  clients.push(g);
  return { a, g };
}
/** Fails the test instead of hanging when a call gets no status. */
function within<T>(ms: number, p: Promise<T>, what: string): Promise<T> {
  return Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what}: no status within ${ms} ms`)), ms))]);
}

describe('gRPC error trailers', () => {
  it('a non-ASCII id gets NOT_FOUND with the REST message and a parseable svc-error-json trailer', async () => {
    const { a, g } = await grpcAgent();
    const rest = await a.json(`/v1/entities/${encodeURIComponent('Dockhänd')}`);
    expect(rest.status).toBe(404);
    const out = await within(5000, callUnary(g.client, 'GetEntity', { entity_id: 'Dockhänd' }), 'GetEntity');
    expect(out.statusName).toBe('NOT_FOUND');
    expect(out.message).toBe(rest.body.error);
    expect(out.message).toBe("entity 'Dockhänd' not found");
    expect(out.errorCode).toBe('not_found');
    expect(out.errorEnvelope).toEqual(rest.body);
    // Emoji (outside the BMP) and control characters survive too.
    const odd = await within(5000, callUnary(g.client, 'GetEntity', { entity_id: 'rob😀t\u0007' }), 'GetEntity');
    expect(odd.status).toBe(Status.NOT_FOUND);
    expect(odd.errorEnvelope).toMatchObject({ code: 'not_found', error: "entity 'rob😀t\u0007' not found" });
  });

  it('a 64 KiB id gets a real status with bounded trailers, and the next call on the same connection succeeds promptly', async () => {
    const { g } = await grpcAgent();
    const huge = 'x'.repeat(64 * 1024);
    const out = await within(5000, callUnary(g.client, 'GetEntity', { entity_id: huge }), 'GetEntity 64 KiB');
    expect([Status.NOT_FOUND, Status.INVALID_ARGUMENT]).toContain(out.status);
    expect(out.message.length).toBeLessThan(1024);
    expect(out.message).toContain('…');
    expect(out.errorEnvelope).toMatchObject({ code: out.status === Status.NOT_FOUND ? 'not_found' : 'bad_request' });
    expect(JSON.stringify(out.errorEnvelope).length).toBeLessThan(4096);

    // Ids whose characters grow when encoded: '%' is percent-encoded three times over in grpc-message,
    // '"' doubled in JSON, 'ü' six-fold as an escape. The '%' one used to leave the call without a
    // status and stall every later call on the connection.
    for (const id of ['%'.repeat(64 * 1024), '"'.repeat(64 * 1024), 'ü'.repeat(40 * 1024)]) {
      const o = await within(5000, callUnary(g.client, 'GetEntity', { entity_id: id }), `GetEntity ${id[0]} x ${id.length}`);
      expect([Status.NOT_FOUND, Status.INVALID_ARGUMENT]).toContain(o.status);
      expect(o.message.length).toBeLessThan(1024);
      expect(o.errorEnvelope.code).toBe(o.errorCode);
    }

    const started = Date.now();
    const next = await within(5000, callUnary(g.client, 'GetTenant', {}), 'GetTenant after');
    expect(next.ok).toBe(true);
    expect(Date.now() - started).toBeLessThan(2000);
  });
});
