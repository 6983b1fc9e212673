import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AuditChain, readAuditChain, readAuditFile, sealedSegments } from '../../agent/audit/audit-chain.js';
import { loadSettings, SettingsError } from '../../agent/settings/settings.js';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';

/**
 * The segmented audit chain (docs/security.md §10 "Files", docs/configuration.md
 * `SVC_AUDIT_SEGMENT_BYTES`): the current file is sealed into numbered segments, the chain runs
 * unbroken across them, verification at start streams them, and the routes read from the files.
 */
const ADMIN = 'c4'.repeat(32);
const auth = { Authorization: `Bearer ${ADMIN}` };
const CHAIN = 'control-center-audit-chain.jsonl';
const SEGMENT = 4096;

let running: RunningAgent[] = [];
afterEach(async () => {
  await Promise.all(running.map((a) => a.close()));
  running = [];
});
async function agent(stateDir: string) {
  const a = await startAgent({ stateDir, env: { SVC_API_KEY: ADMIN, SVC_SESSION_JWT_SECRET: 'segments', SVC_AUDIT_SEGMENT_BYTES: String(SEGMENT) } });
  running.push(a);
  return a;
}
async function stop() {
  await Promise.all(running.map((a) => a.close()));
  running = [];
}
const ids = (n: number, from = 1) => Array.from({ length: n }, (_, i) => `audit-${from + i}`);

describe('segmented audit chain', () => {
  it('a small threshold makes several segments; the chain verifies across them, across a restart, and export returns every record in order', async () => {
    const stateDir = tempDir();
    const a = await agent(stateDir);
    const N = 40;
    for (let i = 0; i < N; i++) expect((await a.json('/v1/alerts/test', { method: 'POST', headers: auth })).status).toBe(200);

    const file = path.join(stateDir, CHAIN);
    const segments = sealedSegments(file);
    expect(segments.length).toBeGreaterThanOrEqual(3);
    expect(segments.map((s) => s.n)).toEqual(segments.map((_, i) => i + 1));
    for (const s of segments) expect(fs.statSync(s.file).size).toBeGreaterThanOrEqual(SEGMENT);
    // Each segment's first record chains to the last hash of the one before.
    const files = [...segments.map((s) => s.file), file].filter((f) => fs.existsSync(f));
    for (let i = 1; i < files.length; i++) {
      const last = [...readAuditFile(files[i - 1]!)].at(-1)!;
      const first = [...readAuditFile(files[i]!)][0];
      if (first) expect(first.previous_hash).toBe(last.hash);
    }

    const list = await a.json('/v1/audit/mutations', { headers: auth });
    expect(list.body).toMatchObject({ chain_valid: true, record_count: N, persist_path: file });
    expect(list.body.audit.records.map((r: { id: string }) => r.id)).toEqual(ids(N));
    await stop();

    const b = await agent(stateDir);
    expect((await b.json('/v1/audit/mutations', { headers: auth })).body).toMatchObject({ chain_valid: true, record_count: N });
    expect((await b.json('/v1/alerts/test', { method: 'POST', headers: auth })).status).toBe(200);
    const exported = await b.json('/v1/audit/mutations/export?format=jsonl', { headers: auth });
    expect(exported.body.record_count).toBe(N + 1);
    const lines = exported.body.content.trim().split('\n').map((l: string) => JSON.parse(l));
    expect(lines.map((l: { id: string }) => l.id)).toEqual(ids(N + 1));
    const cef = await b.json('/v1/audit/mutations/export?format=cef', { headers: auth });
    expect(cef.body.content.trim().split('\n').map((l: string) => /externalId=(audit-\d+)/.exec(l)![1])).toEqual(ids(N + 1));
    expect((await b.json('/v1/alerts')).body.alerts.filter((x: { alert_type: string }) => x.alert_type === 'tamper')).toEqual([]);
  });

  it('an edited record in a sealed segment is caught at start: chain_valid false at that record and a critical tamper alert', async () => {
    const stateDir = tempDir();
    const a = await agent(stateDir);
    for (let i = 0; i < 30; i++) await a.json('/v1/alerts/test', { method: 'POST', headers: auth });
    await stop();
    const segments = sealedSegments(path.join(stateDir, CHAIN));
    expect(segments.length).toBeGreaterThanOrEqual(2);
    const target = segments[1]!.file;
    const lines = fs.readFileSync(target, 'utf8').trimEnd().split('\n');
    const victim = JSON.parse(lines[1]!);
    lines[1] = JSON.stringify({ ...victim, payload: victim.payload.replace('env-default', 'someone-else') });
    fs.writeFileSync(target, `${lines.join('\n')}\n`);

    const b = await agent(stateDir);
    const r = await b.json('/v1/audit/mutations', { headers: auth });
    expect(r.body).toMatchObject({ chain_valid: false, chain_break_at: victim.id, chain_break_reason: 'hash does not match the record content' });
    expect((await b.json('/v1/alerts')).body.alerts).toContainEqual(expect.objectContaining({ alert_type: 'tamper', severity: 'critical', source: 'audit-chain' }));

    // A whole sealed segment removed is a break too: the next segment's first link no longer matches.
    await stop();
    fs.writeFileSync(target, `${lines.map((l, i) => (i === 1 ? JSON.stringify(victim) : l)).join('\n')}\n`);
    fs.rmSync(segments[0]!.file);
    const c = await agent(stateDir);
    expect((await c.json('/v1/audit/mutations', { headers: auth })).body).toMatchObject({ chain_valid: false, chain_break_reason: 'previous_hash does not match the preceding record' });
  });

  it('20 000 appends keep no record in memory: the chain holds counters only, and a reopen verifies by streaming', () => {
    const file = path.join(tempDir(), CHAIN);
    const chain = new AuditChain(file, 'mem', { segmentBytes: 1024 * 1024 });
    const N = 20_000;
    for (let i = 0; i < N; i++) chain.append('e', { i, pad: 'x'.repeat(200) });
    expect(chain.count).toBe(N);
    // Structural: no field of the chain (or of its log) is a collection that grows with the records.
    const collections = (o: object) => Object.values(o).filter((v) => Array.isArray(v) || v instanceof Map || v instanceof Set);
    expect(collections(chain)).toEqual([]);
    for (const v of Object.values(chain)) if (v && typeof v === 'object' && !Buffer.isBuffer(v)) expect(collections(v as object)).toEqual([]);
    expect('all' in chain).toBe(false);
    chain.close();
    expect(sealedSegments(file).length).toBeGreaterThanOrEqual(4);

    const reopened = new AuditChain(file, 'mem', { segmentBytes: 1024 * 1024 });
    expect(reopened.verification).toMatchObject({ valid: true, tornTail: false });
    expect(reopened.count).toBe(N);
    const next = reopened.append('e', { i: N });
    expect(next.id).toBe(`audit-${N + 1}`);
    reopened.close();
    let n = 0;
    let previous = '';
    for (const r of readAuditChain(file)) {
      expect(r.previous_hash).toBe(previous);
      previous = r.hash;
      n++;
    }
    expect(n).toBe(N + 1);
  }, 120_000);

  it('SVC_AUDIT_SEGMENT_BYTES: default 8 MiB, 0 never seals, a tiny or malformed value stops the start', () => {
    expect(loadSettings({}, '/').auditSegmentBytes).toBe(8 * 1024 * 1024);
    expect(loadSettings({ SVC_AUDIT_SEGMENT_BYTES: '0' }, '/').auditSegmentBytes).toBe(0);
    expect(loadSettings({ SVC_AUDIT_SEGMENT_BYTES: '65536' }, '/').auditSegmentBytes).toBe(65536);
    expect(() => loadSettings({ SVC_AUDIT_SEGMENT_BYTES: '100' }, '/')).toThrow(SettingsError);
    expect(() => loadSettings({ SVC_AUDIT_SEGMENT_BYTES: '8MiB' }, '/')).toThrow(SettingsError);
  });
});
