import { afterEach, describe, expect, it } from 'vitest';
import { createHttpApp } from '../../agent/transports/http/http-app.js';
import { mountTelemetryStream } from '../../agent/transports/ws/telemetry-stream.js';
import { SPECS } from '../../api/index.js';
import { rpcBindings } from '../../api/spec.js';
import { accessOf, cliWords, pathParams } from '../../agent/core/operation.js';
import { startAgent, type RunningAgent } from '../helpers/agent-harness.js';

let running: RunningAgent | null = null;
afterEach(async () => {
  await running?.close();
  running = null;
});

describe('OpenAPI document (docs/wire-decisions.md D12)', () => {
  it('lists exactly the routes the REST app serves', async () => {
    running = await startAgent();
    const app = createHttpApp(running.agent.services, running.agent.services.operations, (a) => mountTelemetryStream(a, running!.agent.services, new Set()));
    const served = new Set(
      app.routes
        .filter((r) => r.method !== 'ALL')
        .map((r) => `${r.method} ${r.path.replace(/:([^/]+)/g, '{$1}')}`),
    );
    const { status, body } = await running.json('/v1/openapi.json');
    expect(status).toBe(200);
    const documented = new Set<string>();
    for (const [p, methods] of Object.entries(body.paths as Record<string, Record<string, unknown>>)) {
      for (const m of Object.keys(methods)) documented.add(`${m.toUpperCase()} ${p}`);
    }
    expect([...documented].sort()).toEqual([...served].sort());
    expect(documented.size).toBeGreaterThanOrEqual(SPECS.length);
  });

  it('is OpenAPI 3.1 with bearer auth, the error envelope, request schemas and unique operation ids', async () => {
    running = await startAgent();
    const { body } = await running.json('/v1/openapi.json', { method: 'POST' }); // any method
    expect(body.openapi).toBe('3.1.0');
    expect(body.info.title).toBe('Svc Control Center API');
    expect(body.components.securitySchemes.bearerAuth).toEqual(expect.objectContaining({ type: 'http', scheme: 'bearer' }));
    expect(body.components.schemas.Error.required).toEqual(['ok', 'error', 'code']);
    const ids = new Set<string>();
    for (const op of SPECS) {
      const entry = body.paths[op.path][op.method.toLowerCase()];
      expect(entry.operationId).toBe(op.id);
      expect(ids.has(op.id)).toBe(false);
      ids.add(op.id);
      expect(entry.responses['401'].content['application/json'].schema.$ref).toBe('#/components/schemas/Error');
      if (op.body) expect(entry.requestBody.content['application/json'].schema.type).toBe('object');
      for (const p of pathParams(op.path)) expect(entry.parameters).toContainEqual(expect.objectContaining({ name: p, in: 'path', required: true }));
      if (accessOf(op).kind === 'public') expect(entry.security).toEqual([]);
      else expect(JSON.stringify(entry.security)).toContain('bearerAuth');
    }
    expect(body.paths['/v1/alerts/test'].post.requestBody.content['application/json'].schema.properties.message.type).toBe('string');
  });

  it('every operation has a unique CLI command and a unique method+path', () => {
    const words = SPECS.map((o) => cliWords(o)?.join(' ')).filter(Boolean);
    expect(new Set(words).size).toBe(words.length);
    const routes = SPECS.map((o) => `${o.method} ${o.path}`);
    expect(new Set(routes).size).toBe(routes.length);
    const rpcs = SPECS.flatMap((o) => rpcBindings(o)).map((o) => o.rpc!.name);
    expect(new Set(rpcs).size).toBe(rpcs.length);
  });
});
