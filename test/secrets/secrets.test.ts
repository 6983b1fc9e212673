import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseProgram, ProgramSyntaxError } from '../../agent/programs/language/index.js';
import { tempDir } from '../helpers/agent-harness.js';
import { gateAgent, gateProject, get, post, type GateAgent } from '../deployment/fixture.js';

let running: GateAgent[] = [];
afterEach(async () => {
  await Promise.all(running.map((a) => a.close()));
  running = [];
});
async function agent(...args: Parameters<typeof gateAgent>): Promise<GateAgent> {
  const a = await gateAgent(...args);
  running.push(a);
  return a;
}

const TOKEN_VALUE = 'tok-value-9f3e1c';
const LITERAL_VALUE = 'hunter2-literal-value';
const FILE_VALUE = 'file-secret-content-77aa';

describe('secret declarations in the program language', () => {
  it('`secret NAME from env("VAR") | file "path" | "literal";` are robot members; a literal value is not kept in the model', () => {
    const program = parseProgram(
      `robot Rover {
    sensor lidar: Lidar;
    secret api_token from env("API_TOKEN");
    secret cert_key from file "keys/robot.key";
    secret inline_pw from "${LITERAL_VALUE}";
    secret { rotate: 30 d; }
}`,
      'rover.sd',
    );
    const rover = program.robots[0]!;
    expect(rover.secrets).toEqual([
      { name: 'api_token', source: { kind: 'env', variable: 'API_TOKEN' }, loc: { line: 3, column: 5 } },
      { name: 'cert_key', source: { kind: 'file', path: 'keys/robot.key' }, loc: { line: 4, column: 5 } },
      { name: 'inline_pw', source: { kind: 'literal' }, loc: { line: 5, column: 5 } },
    ]);
    // Other shapes starting with `secret` stay generic members, as before.
    expect(rover.generic.map((g) => g.keyword)).toEqual(['secret']);
    expect(JSON.stringify(rover.secrets)).not.toContain(LITERAL_VALUE);
    expect(JSON.stringify(rover.generic)).not.toContain(LITERAL_VALUE);
  });

  it('a malformed declaration is a parse error naming what was expected', () => {
    expect(() => parseProgram('robot R { secret k from 42; }', 'r.sd')).toThrow(ProgramSyntaxError);
    expect(() => parseProgram('robot R { secret k from 42; }', 'r.sd')).toThrow(/expected env\("VAR"\), file "path" or a string after 'from'/);
    expect(() => parseProgram('robot R { secret k from env(API); }', 'r.sd')).toThrow(/environment variable name as a string/);
  });
});

describe('GET /v1/secrets', () => {
  it('F31: metadata of the declared secrets, never a value; resolvable follows the environment and readable files inside the project', async () => {
    const project = gateProject({ files: { 'keys/robot.key': FILE_VALUE } });
    // A readable file outside the project root never counts as resolvable.
    fs.writeFileSync(path.join(path.dirname(path.dirname(project.configPath)), 'outside.key'), 'x');
    const a = await agent(project, { env: { API_TOKEN: TOKEN_VALUE } });
    const res = await a.fetch('/v1/secrets', { headers: { Authorization: `Bearer ${a.keys.developer}` } });
    expect(res.status).toBe(200);
    const raw = await res.text();
    for (const value of [TOKEN_VALUE, LITERAL_VALUE, FILE_VALUE, 'API_TOKEN', 'keys/robot.key']) expect(raw).not.toContain(value);
    const body = JSON.parse(raw);
    expect(body.secrets.map((s: { name: string }) => s.name)).toEqual(['api_token', 'cert_key', 'inline_pw', 'outside_key']);
    const byName = Object.fromEntries(body.secrets.map((s: { name: string }) => [s.name, s]));
    expect(byName.api_token).toEqual({ name: 'api_token', created_at_ms: expect.any(Number), rotation_count: 0, source_kind: 'env', resolvable: true, robots: ['Rover'] });
    expect(byName.cert_key).toMatchObject({ source_kind: 'file', resolvable: true });
    expect(byName.inline_pw).toMatchObject({ source_kind: 'literal', resolvable: true });
    expect(byName.outside_key).toMatchObject({ source_kind: 'file', resolvable: false });
    expect(byName.api_token).not.toHaveProperty('last_rotated_at_ms');
    // The persisted metadata holds no value either.
    const stored = fs.readFileSync(path.join(a.stateDir, 'secret-metadata.json'), 'utf8');
    for (const value of [TOKEN_VALUE, LITERAL_VALUE, FILE_VALUE]) expect(stored).not.toContain(value);
  });

  it('an unset variable is not resolvable; without a program the list is empty', async () => {
    const a = await agent(gateProject());
    const listed = (await get(a, '/v1/secrets', a.keys.developer)).body.secrets;
    expect(listed.find((s: { name: string }) => s.name === 'api_token')).toMatchObject({ source_kind: 'env', resolvable: false });
    expect(listed.find((s: { name: string }) => s.name === 'cert_key')).toMatchObject({ resolvable: false });
    const bare = await agent(null);
    expect((await get(bare, '/v1/secrets', bare.keys.developer)).body).toEqual({ version: 'v1', secrets: [] });
  });

  it('the same name on two robots counts once; a changed program is picked up on the next read (created_at_ms kept)', async () => {
    const twoRobots = `
robot Rover { secret shared from env("SHARED"); }
robot Scout { secret shared from env("SHARED"); secret scout_only from "x"; }
`;
    const project = gateProject({ program: twoRobots });
    const a = await agent(project);
    const first = (await get(a, '/v1/secrets', a.keys.developer)).body.secrets;
    expect(first.map((s: { name: string; robots: string[] }) => [s.name, s.robots])).toEqual([
      ['scout_only', ['Scout']],
      ['shared', ['Rover', 'Scout']],
    ]);
    // Reload: the program file changes on disk (size differs, so the parse cache notices).
    fs.writeFileSync(project.programPath!, `${twoRobots}\nrobot Third { secret fresh from file "f.key"; }\n`);
    const second = (await get(a, '/v1/secrets', a.keys.developer)).body.secrets;
    expect(second.map((s: { name: string }) => s.name)).toEqual(['fresh', 'scout_only', 'shared']);
    expect(second.find((s: { name: string }) => s.name === 'shared').created_at_ms).toBe(first.find((s: { name: string }) => s.name === 'shared').created_at_ms);
  });

  it('access: anonymous 401, operator and auditor (no Deploy) 403', async () => {
    const a = await agent(gateProject());
    expect((await get(a, '/v1/secrets')).status).toBe(401);
    expect(await get(a, '/v1/secrets', a.keys.operator)).toMatchObject({ status: 403, body: { code: 'forbidden' } });
    expect((await get(a, '/v1/secrets', a.keys.auditor)).status).toBe(403);
  });
});

describe('POST /v1/secrets/{name}/rotate', () => {
  it('records the rotation, emits SecretRotated (audit chain and telemetry stream), and keeps it across a restart', async () => {
    const project = gateProject();
    const stateDir = tempDir('svc-secrets-state-');
    const a = await agent(project, { stateDir, env: { API_TOKEN: TOKEN_VALUE } });
    const before = (await get(a, '/v1/secrets', a.keys.developer)).body.secrets.find((s: { name: string }) => s.name === 'api_token');
    const r = await post(a, '/v1/secrets/api_token/rotate', a.keys.developer, { rotate_every_days: 30 });
    expect(r.status).toBe(200);
    expect(r.body.secret).toMatchObject({ name: 'api_token', rotation_count: 1, created_at_ms: before.created_at_ms, source_kind: 'env', resolvable: true });
    const rotatedAt = r.body.secret.last_rotated_at_ms as number;
    expect(rotatedAt).toBeGreaterThanOrEqual(before.created_at_ms);
    expect(r.body.secret.rotation_due_at_ms).toBe(rotatedAt + 30 * 86_400_000);
    expect(JSON.stringify(r.body)).not.toContain(TOKEN_VALUE);
    expect((await post(a, '/v1/secrets/api_token/rotate', a.keys.developer)).body.secret.rotation_count).toBe(2);

    const audited = [...a.agent.services.audit.chain.records()].filter((x) => x.event_type === 'SecretRotated').map((x) => JSON.parse(x.payload));
    expect(audited.map((p) => [p.entity_id, p.name, p.rotation_count])).toEqual([
      ['secret/api_token', 'api_token', 1],
      ['secret/api_token', 'api_token', 2],
    ]);
    const streamed = a.agent.services.telemetry.ring.all().filter((e) => e.kind === 'platform' && e.event_type === 'secret_rotated');
    expect(streamed.map((e) => (e.kind === 'platform' ? [e.source, e.entity_id, e.payload] : null))).toEqual([
      ['svc-security', 'secret/api_token', { name: 'api_token', rotation_count: 1 }],
      ['svc-security', 'secret/api_token', { name: 'api_token', rotation_count: 2 }],
    ]);
    await a.close();
    running = [];

    const b = await agent(project, { stateDir });
    const after = (await get(b, '/v1/secrets', b.keys.developer)).body.secrets.find((s: { name: string }) => s.name === 'api_token');
    expect(after).toMatchObject({ rotation_count: 2, created_at_ms: before.created_at_ms, rotation_due_at_ms: expect.any(Number), resolvable: false });
    expect(after.last_rotated_at_ms).toBeGreaterThanOrEqual(rotatedAt);
  });

  it('unknown secret 404; anonymous 401; operator 403; bad body 400', async () => {
    const a = await agent(gateProject());
    expect(await post(a, '/v1/secrets/nope/rotate', a.keys.developer)).toMatchObject({ status: 404, body: { code: 'not_found', error: "Unknown secret 'nope'" } });
    expect((await post(a, '/v1/secrets/api_token/rotate', null)).status).toBe(401);
    expect((await post(a, '/v1/secrets/api_token/rotate', a.keys.operator)).status).toBe(403);
    expect((await post(a, '/v1/secrets/api_token/rotate', a.keys.developer, { rotate_every_days: 0 })).status).toBe(400);
    expect((await post(a, '/v1/secrets/api_token/rotate', a.keys.developer, '[1]')).status).toBe(400);
    expect((await get(a, '/v1/secrets', a.keys.developer)).body.secrets.find((s: { name: string }) => s.name === 'api_token').rotation_count).toBe(0);
  });
});
