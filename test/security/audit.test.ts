import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AuditChain, recordHash } from '../../agent/audit/audit-chain.js';
import { toCefLine } from '../../agent/audit/export-formats.js';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';

const ADMIN = 'ad'.repeat(32);
const bearer = (t: string) => ({ Authorization: `Bearer ${t}` });
let running: RunningAgent[] = [];
afterEach(async () => {
  await Promise.all(running.map((a) => a.close()));
  running = [];
});
async function agent(stateDir = tempDir(), env: Record<string, string> = {}) {
  const a = await startAgent({ stateDir, env: { SVC_API_KEY: ADMIN, SVC_SESSION_JWT_SECRET: 'audit-secret', ...env } });
  running.push(a);
  return a;
}
const CHAIN = 'control-center-audit-chain.jsonl';

describe('mutation audit', () => {
  it('records every successful REST mutation in a verifying hash chain, readable only with Deploy', async () => {
    const a = await agent();
    await a.json('/v1/alerts/test', { method: 'POST', headers: { ...bearer(ADMIN), 'X-Correlation-ID': 'corr-audit-1' } });
    const key = await a.json('/v1/admin/api-keys', { method: 'POST', headers: bearer(ADMIN), body: '{"role":"developer"}' });
    // Refused and failed mutations are not recorded.
    await a.json('/v1/alerts/test', { method: 'POST' });
    await a.json('/v1/admin/api-keys', { method: 'POST', headers: bearer(ADMIN), body: '{"role":"guest"}' });

    expect((await a.json('/v1/audit/mutations')).status).toBe(401);
    const operatorKey = await a.json('/v1/admin/api-keys', { method: 'POST', headers: bearer(ADMIN), body: '{"role":"operator"}' });
    expect((await a.json('/v1/audit/mutations', { headers: bearer(operatorKey.body.token) })).status).toBe(403);
    const r = await a.json('/v1/audit/mutations', { headers: bearer(key.body.token) }); // developer has Deploy
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ version: 'v1', chain_valid: true, record_count: 3 });
    // Not an administrator: the file name only, never the absolute state path (docs/security.md §11).
    expect(r.body.persist_path).toBe(CHAIN);
    const records = r.body.audit.records;
    expect(records.map((x: { id: string }) => x.id)).toEqual(['audit-1', 'audit-2', 'audit-3']);
    expect(records[0].previous_hash).toBe('');
    expect(records[1].previous_hash).toBe(records[0].hash);
    for (const rec of records) {
      expect(rec.event_type).toBe('control_center.api.mutation');
      expect(rec.hash).toBe(recordHash(rec.timestamp, rec.event_type, rec.payload, rec.previous_hash));
    }
    expect(JSON.parse(records[0].payload)).toEqual({
      method: 'POST',
      path: '/v1/alerts/test',
      status: 200,
      correlation_id: 'corr-audit-1',
      actor_key_id: 'env-default',
      actor_role: 'Administrator',
    });
    // Neither the admin key nor the created tokens appear anywhere in the audit files.
    const files = fs.readdirSync(a.stateDir).map((f) => fs.readFileSync(path.join(a.stateDir, f), 'utf8')).join('\n');
    for (const secret of [ADMIN, key.body.token, operatorKey.body.token]) expect(files).not.toContain(secret);
    // The JSONL copy for SIEM shipping holds the same records.
    const lines = fs.readFileSync(path.join(a.stateDir, 'control-center-mutations.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.map((l) => l.id)).toEqual(['audit-1', 'audit-2', 'audit-3']);
    expect(lines[0]).toEqual({ id: 'audit-1', event_type: 'control_center.api.mutation', payload: records[0].payload, timestamp_ms: Date.parse(records[0].timestamp) });
  });

  it('continues the chain across a restart and re-verifies it at start', async () => {
    const stateDir = tempDir();
    const a = await agent(stateDir);
    await a.json('/v1/alerts/test', { method: 'POST', headers: bearer(ADMIN) });
    await a.close();
    running = [];
    const b = await agent(stateDir);
    await b.json('/v1/alerts/test', { method: 'POST', headers: bearer(ADMIN) });
    const r = await b.json('/v1/audit/mutations', { headers: bearer(ADMIN) });
    expect(r.body.chain_valid).toBe(true);
    expect(r.body.audit.records.map((x: { id: string }) => x.id)).toEqual(['audit-1', 'audit-2']);
    expect(r.body.audit.records[1].previous_hash).toBe(r.body.audit.records[0].hash);
  });

  it('an edited chain is reported with its break point and raises a critical tamper alert (docs/wire-decisions.md D10)', async () => {
    const stateDir = tempDir();
    const a = await agent(stateDir);
    for (let i = 0; i < 3; i++) await a.json('/v1/alerts/test', { method: 'POST', headers: bearer(ADMIN) });
    await a.close();
    running = [];
    const file = path.join(stateDir, CHAIN);
    const lines = fs.readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    // Rewrite record 2's payload and re-hash it and its successor: still caught by the signatures.
    lines[1].payload = lines[1].payload.replace('env-default', 'someone-else');
    lines[1].hash = recordHash(lines[1].timestamp, lines[1].event_type, lines[1].payload, lines[1].previous_hash);
    lines[2].previous_hash = lines[1].hash;
    lines[2].hash = recordHash(lines[2].timestamp, lines[2].event_type, lines[2].payload, lines[2].previous_hash);
    fs.writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');

    const b = await agent(stateDir);
    const r = await b.json('/v1/audit/mutations', { headers: bearer(ADMIN) });
    expect(r.status).toBe(200);
    expect(r.body.chain_valid).toBe(false);
    expect(r.body.chain_break_at).toBe('audit-2');
    const alerts = (await b.json('/v1/alerts')).body.alerts;
    expect(alerts).toContainEqual(expect.objectContaining({ alert_type: 'tamper', severity: 'critical', source: 'audit-chain' }));
    // New records still append after the last stored one.
    await b.json('/v1/alerts/test', { method: 'POST', headers: bearer(ADMIN) });
    const after = await b.json('/v1/audit/mutations', { headers: bearer(ADMIN) });
    expect(after.body.audit.records.at(-1).id).toBe('audit-4');
  });

  it('a torn last line is set aside at start, so the next mutation and a restart leave the chain valid', async () => {
    const stateDir = tempDir();
    const a = await agent(stateDir);
    for (let i = 0; i < 2; i++) await a.json('/v1/alerts/test', { method: 'POST', headers: bearer(ADMIN) });
    await a.close();
    running = [];
    const file = path.join(stateDir, CHAIN);
    // Power loss mid-append: the third record's line is cut short, without its newline.
    const torn = fs.readFileSync(file, 'utf8').split('\n')[0]!.slice(0, 57);
    fs.appendFileSync(file, torn);

    const b = await agent(stateDir);
    const first = await b.json('/v1/audit/mutations', { headers: bearer(ADMIN) });
    expect(first.body).toMatchObject({ chain_valid: true, torn_tail: true, record_count: 2 });
    expect((await b.json('/v1/alerts/test', { method: 'POST', headers: bearer(ADMIN) })).status).toBe(200);
    await b.close();
    running = [];

    const c = await agent(stateDir);
    const r = await c.json('/v1/audit/mutations', { headers: bearer(ADMIN) });
    expect(r.body.chain_valid).toBe(true);
    expect(r.body.torn_tail).toBeUndefined();
    expect(r.body.audit.records.map((x: { id: string }) => x.id)).toEqual(['audit-1', 'audit-2', 'audit-3']);
    expect(r.body.audit.records[2].previous_hash).toBe(r.body.audit.records[1].hash);
    const alerts = (await c.json('/v1/alerts')).body.alerts;
    expect(alerts.filter((x: { alert_type: string }) => x.alert_type === 'tamper')).toEqual([]);
    // The torn bytes are kept aside for forensics, not thrown away.
    const aside = fs.readdirSync(stateDir).filter((f) => f.startsWith(`${CHAIN}.torn-`));
    expect(aside).toHaveLength(1);
    expect(fs.readFileSync(path.join(stateDir, aside[0]!), 'utf8')).toBe(torn);
    expect(fs.readFileSync(file, 'utf8').endsWith('\n')).toBe(true);
  });

  it('a plain edit without re-hashing, a deleted record and a torn last line', () => {
    const dir = tempDir();
    const file = path.join(dir, CHAIN);
    const chain = new AuditChain(file, 's');
    for (let i = 0; i < 4; i++) chain.append('e', { i });
    chain.close();
    const original = fs.readFileSync(file, 'utf8');
    expect(new AuditChain(file, 's').verification).toMatchObject({ valid: true, tornTail: false });

    fs.writeFileSync(file, original.replace('{\\"i\\":2}', '{\\"i\\":9}'));
    expect(new AuditChain(file, 's').verification).toMatchObject({ valid: false, breakAt: 'audit-3' });

    const withoutSecond = original.split('\n').filter((_, i) => i !== 1).join('\n');
    fs.writeFileSync(file, withoutSecond);
    expect(new AuditChain(file, 's').verification).toMatchObject({ valid: false, breakAt: 'audit-3' });

    fs.writeFileSync(file, original + original.split('\n')[0]!.slice(0, 40));
    expect(new AuditChain(file, 's').verification).toMatchObject({ valid: true, tornTail: true });

    // Another signing key: records of the old key are accepted only before ours.
    fs.writeFileSync(file, original);
    const rotated = new AuditChain(file, 'new-secret');
    expect(rotated.verification).toMatchObject({ valid: true, foreignSigner: 4 });
    rotated.append('e', { i: 5 });
    rotated.close();
    expect(new AuditChain(file, 'new-secret').verification).toMatchObject({ valid: true, foreignSigner: 4 });
  });

  it('exports JSON Lines and CEF with CEF escaping; other formats are 400', async () => {
    const a = await agent();
    await a.json('/v1/alerts/test', { method: 'POST', headers: { ...bearer(ADMIN), 'X-Correlation-ID': 'a=b|c\\d' } });
    const jsonl = await a.json('/v1/audit/mutations/export?format=jsonl', { headers: bearer(ADMIN) });
    expect(jsonl.body).toMatchObject({ version: 'v1', format: 'jsonl', record_count: 1 });
    expect(JSON.parse(jsonl.body.content.trim())).toMatchObject({ id: 'audit-1', event_type: 'control_center.api.mutation' });
    const def = await a.json('/v1/audit/mutations/export', { headers: bearer(ADMIN) });
    expect(def.body.format).toBe('jsonl');
    const cef = await a.json('/v1/audit/mutations/export?format=CEF', { headers: bearer(ADMIN) });
    const line: string = cef.body.content.trim();
    expect(line.startsWith('CEF:0|Svc|ControlCenter|1.0|control_center.api.mutation|API mutation|5|')).toBe(true);
    expect(line).toContain('requestMethod=POST request=/v1/alerts/test suser=env-default');
    expect(line).toContain('cs1=a\\=b|c\\\\d cs1Label=CorrelationId');
    const bad = await a.json('/v1/audit/mutations/export?format=xml', { headers: bearer(ADMIN) });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('format must be cef or jsonl');
  });

  it('CEF header fields escape pipes and backslashes; extension values escape newlines', () => {
    const line = toCefLine({
      id: 'audit-1',
      timestamp: '2026-01-01T00:00:00.000Z',
      event_type: 'odd|type\\x',
      payload: JSON.stringify({ method: 'POST', path: '/v1/x', actor_key_id: 'k', correlation_id: 'line1\nline2' }),
      hash: 'h',
      signature: 's',
      signer_id: 'x',
      signing_key: null,
      previous_hash: '',
    });
    expect(line).toContain('|odd\\|type\\\\x|');
    expect(line).toContain('cs1=line1\\nline2');
    expect(line.split('\n')).toHaveLength(1);
  });
});
