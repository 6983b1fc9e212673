import { afterEach, describe, expect, it } from 'vitest';
import { accessLabel, accessOf, defineSpec, isAudited, isMutation } from '../../api/spec.js';
import { handlersFor } from '../../agent/core/handlers.js';
import type { ExtraOperations } from '../../agent/runtime/agent.js';
import { SPECS } from '../../api/index.js';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Access and sensitivity are properties of each operation (docs/security.md §5 "Access rules", §6).
 * Before, a hand-kept list of path prefixes decided which reads were sensitive, so a new path not on
 * it was readable without a credential under SVC_API_REQUIRE_AUTH_READS: new domains were open by
 * default. Now an operation that declares nothing is a sensitive read (GET) or an Operate mutation.
 */
const KEYS = { admin: 'a1'.repeat(32), operator: 'a2'.repeat(32), auditor: 'a3'.repeat(32) };
const LABELS = /^(public|read|sensitive-read|admin|action:[A-Z]\w+)$/;
let running: RunningAgent[] = [];
afterEach(async () => {
  await Promise.all(running.map((a) => a.close()));
  running = [];
});

async function agentWith(env: Record<string, string>, extra: ExtraOperations = {}): Promise<RunningAgent> {
  const stateDir = tempDir('svc-access-');
  const keys = path.join(stateDir, 'keys.json');
  fs.writeFileSync(keys, JSON.stringify(Object.entries(KEYS).map(([role, token]) => ({ key_id: role, token, role: role === 'admin' ? 'administrator' : role }))));
  const a = await startAgent({ stateDir, env: { SVC_API_KEYS_FILE: keys, ...env }, extra });
  running.push(a);
  return a;
}

const concrete = (p: string) => p.replace(/\{[^}]+\}/g, 'no-such-id');

describe('access rules of every operation', () => {
  it('every operation has one of the five rules, and the OpenAPI document shows it and its audit rule', async () => {
    const a = await agentWith({});
    const doc = (await a.json('/v1/openapi.json')).body;
    for (const op of SPECS) {
      const label = accessLabel(accessOf(op));
      expect(label, op.id).toMatch(LABELS);
      const entry = doc.paths[op.path][op.method.toLowerCase()];
      expect(entry['x-svc-access'], op.id).toBe(label);
      expect(entry['x-svc-audit'], op.id).toBe(isAudited(op));
    }
    // Reads are never audited; every action/admin mutation is. A GET is a mutation only when its spec
    // says it writes on every call (`writes`, e.g. the compliance export appending evidence).
    expect(SPECS.filter((o) => o.method === 'GET' && isMutation(o)).map((o) => o.id)).toEqual(SPECS.filter((o) => o.method === 'GET' && o.writes === true).map((o) => o.id));
    expect(SPECS.filter((o) => o.method === 'GET' && o.writes === true).map((o) => o.id)).toEqual(['exportCompliance']);
  });

  it('under SVC_API_REQUIRE_AUTH_READS every sensitive read refuses anonymous callers and every open read answers them', async () => {
    const a = await agentWith({ SVC_API_REQUIRE_AUTH_READS: '1' });
    const gets = SPECS.filter((o) => o.method === 'GET' && o.path !== '/v1/openapi.json');
    const wrong: string[] = [];
    for (const op of gets) {
      const kind = accessOf(op).kind;
      const anon = await a.fetch(concrete(op.path));
      if (kind === 'sensitive-read' && anon.status !== 401) wrong.push(`${op.path}: anonymous ${anon.status}, expected 401`);
      if ((kind === 'read' || kind === 'public') && anon.status === 401) wrong.push(`${op.path}: open read refused anonymous`);
      if (kind === 'sensitive-read') {
        const keyed = await a.fetch(concrete(op.path), { headers: { authorization: `Bearer ${KEYS.auditor}` } });
        if (keyed.status === 401) wrong.push(`${op.path}: refused a valid key`);
      }
    }
    expect(wrong).toEqual([]);
    expect(gets.filter((o) => accessOf(o).kind === 'sensitive-read').length).toBeGreaterThan(20);
  });

  it('under SVC_API_REQUIRE_AUTH_ALL_READS every read but the public ones refuses anonymous callers', async () => {
    const a = await agentWith({ SVC_API_REQUIRE_AUTH_ALL_READS: '1' });
    const wrong: string[] = [];
    for (const op of SPECS.filter((o) => o.method === 'GET')) {
      const status = (await a.fetch(concrete(op.path))).status;
      const pub = accessOf(op).kind === 'public';
      if (pub === (status === 401)) wrong.push(`${op.path}: ${status}`);
    }
    expect(wrong).toEqual([]);
  });

  it('a new operation that declares no access is closed: a sensitive read, or an Operate mutation', async () => {
    const probe = defineSpec({
      id: 'probeNewDomain',
      group: 'probe',
      summary: 'a route of a domain nobody has classified',
      method: 'GET',
      path: '/v1/new-domain/things',
    });
    const write = defineSpec({
      id: 'probeNewDomainWrite',
      group: 'probe',
      summary: 'a write nobody has classified',
      method: 'POST',
      path: '/v1/new-domain/things',
    });
    const on = handlersFor([]);
    const handlers = [on(probe, () => ({ things: ['secret'] })), on(write, () => ({ ok: true }))];
    expect(accessOf(probe)).toEqual({ kind: 'sensitive-read' });
    expect(accessOf(write)).toEqual({ kind: 'action', action: 'Operate' });
    expect(isMutation(write)).toBe(true);

    const a = await agentWith({ SVC_API_REQUIRE_AUTH_READS: '1' }, { specs: [probe, write], handlers });
    expect((await a.fetch('/v1/new-domain/things')).status).toBe(401);
    expect((await a.fetch('/v1/new-domain/things', { headers: { authorization: `Bearer ${KEYS.auditor}` } })).status).toBe(200);
    const post = (key: string | null) =>
      a.fetch('/v1/new-domain/things', { method: 'POST', headers: key ? { authorization: `Bearer ${key}` } : {}, body: '{}' });
    expect((await post(null)).status).toBe(401);
    expect((await post(KEYS.auditor)).status).toBe(403);
    expect((await post(KEYS.operator)).status).toBe(200);
    // And it is audited like any mutation.
    const records = [...a.agent.services.audit.chain.records()].filter((r) => r.payload.includes('/v1/new-domain/things'));
    expect(records).toHaveLength(1);
  });
});
