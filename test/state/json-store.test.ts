import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { commitState } from '../../agent/state/commit.js';
import { JsonStore } from '../../agent/state/json-store.js';
import { tempDir } from '../helpers/agent-harness.js';

const read = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8'));

describe('JsonStore commits (docs/security.md §10, Durability)', () => {
  it('commit() resolves only once the change is in the file, owner-only', async () => {
    const file = path.join(tempDir(), 'items.json');
    const store = await JsonStore.open<number[]>(file, { defaults: () => [] });
    store.change((d) => d.push(1));
    expect(store.pending).toBe(true);
    expect(fs.existsSync(file)).toBe(false);
    await store.commit();
    expect(store.pending).toBe(false);
    expect(read(file)).toEqual([1]);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    // No temporary is left beside it.
    expect(fs.readdirSync(path.dirname(file))).toEqual(['items.json']);
    await store.close();
  });

  it('concurrent commits share writes (group commit) and each sees its own change on disk', async () => {
    const file = path.join(tempDir(), 'items.json');
    const store = await JsonStore.open<number[]>(file, { defaults: () => [] });
    let writes = 0;
    store.beforeWrite = () => writes++;
    const commits: Promise<void>[] = [];
    for (let i = 0; i < 200; i++) {
      store.change((d) => d.push(i));
      commits.push(store.commit().then(() => expect(read(file)).toContain(i)));
    }
    await Promise.all(commits);
    expect(read(file)).toHaveLength(200);
    // One write for the first change, one for everything that arrived while it ran.
    expect(writes).toBeLessThanOrEqual(3);
    await store.close();
  });

  it('a change made while a write is under way is written by the next one, not lost', async () => {
    const file = path.join(tempDir(), 'items.json');
    const store = await JsonStore.open<number[]>(file, { defaults: () => [] });
    store.change((d) => d.push(1));
    const first = store.commit();
    store.change((d) => d.push(2));
    const second = store.commit();
    await first;
    await second;
    expect(read(file)).toEqual([1, 2]);
    await store.close();
  });

  it('commitState() waits for every durable store and skips the non-durable ones', async () => {
    const dir = tempDir();
    const a = await JsonStore.open<string[]>(path.join(dir, 'a.json'), { defaults: () => [] });
    const b = await JsonStore.open<string[]>(path.join(dir, 'b.json'), { defaults: () => [] });
    const ring = await JsonStore.open<string[]>(path.join(dir, 'ring.json'), { defaults: () => [], durable: false, coalesceMs: 60_000 });
    a.change((d) => d.push('a'));
    b.change((d) => d.push('b'));
    ring.change((d) => d.push('r'));
    const ringCommit = vi.spyOn(ring, 'commit');
    await commitState();
    expect(read(path.join(dir, 'a.json'))).toEqual(['a']);
    expect(read(path.join(dir, 'b.json'))).toEqual(['b']);
    // The trace-ring kind of store is written in the background only: no request waits for it.
    expect(ringCommit).not.toHaveBeenCalled();
    await Promise.all([a.close(), b.close(), ring.close()]);
    expect(read(path.join(dir, 'ring.json'))).toEqual(['r']);
  });

  it('a failed write rejects the commit (no 2xx) and the next commit retries it', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'sub', 'items.json');
    const warnings: string[] = [];
    const store = await JsonStore.open<number[]>(file, { defaults: () => [], onWarning: (m) => warnings.push(m) });
    // The directory disappears under the agent: the write cannot happen.
    fs.rmSync(path.join(dir, 'sub'), { recursive: true });
    store.change((d) => d.push(7));
    await expect(store.commit()).rejects.toThrow(/ENOENT/);
    expect(warnings.some((w) => w.includes('could not write'))).toBe(true);
    expect(store.pending).toBe(true);
    fs.mkdirSync(path.join(dir, 'sub'));
    await store.commit();
    expect(read(file)).toEqual([7]);
    await store.close();
  });

  it('a failed write answers a mutation 500, never 2xx', async () => {
    const { startAgent } = await import('../helpers/agent-harness.js');
    const key = 'e'.repeat(64);
    const a = await startAgent({ env: { SVC_API_KEY: key } });
    try {
      const incidents = a.agent.services.incidents as unknown as { store: JsonStore<unknown[]> };
      const spy = vi.spyOn(incidents.store, 'commit').mockRejectedValueOnce(new Error('EIO: disk gone'));
      const r = await a.json('/v1/sre/incidents', { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: '{"title":"x"}' });
      expect(r.status).toBe(500);
      expect(r.body).toMatchObject({ ok: false, code: 'internal_error' });
      spy.mockRestore();
    } finally {
      await a.close();
    }
  });
});

describe("JsonlLog with fsync 'group'", () => {
  it('appends at once, in order, and commitState() fsyncs every pending line with one call', async () => {
    const { JsonlLog, readJsonl } = await import('../../agent/state/jsonl-log.js');
    const file = path.join(tempDir(), 'log.jsonl');
    const log = new JsonlLog<{ n: number }>(file, { fsync: 'group' });
    const fdatasync = vi.spyOn(fs, 'fdatasync');
    for (let n = 0; n < 50; n++) log.append({ n });
    expect(log.pending).toBe(true);
    // Written already (a crash of the process keeps it), durable once committed.
    expect(readJsonl<{ n: number }>(file).records.map((r) => r.n)).toEqual([...Array(50).keys()]);
    await commitState();
    expect(log.pending).toBe(false);
    expect(fdatasync).toHaveBeenCalledTimes(1);
    fdatasync.mockRestore();
    log.close();
  });

  it('a rotation while a group fsync is under way neither loses lines nor fails the commit', async () => {
    const { JsonlLog, readJsonl } = await import('../../agent/state/jsonl-log.js');
    const file = path.join(tempDir(), 'log.jsonl');
    const log = new JsonlLog<{ n: number }>(file, { fsync: 'group', maxBytes: 200, keepFiles: 100 });
    const commits: Promise<void>[] = [];
    for (let n = 0; n < 100; n++) {
      log.append({ n });
      commits.push(log.commit());
    }
    await Promise.all(commits);
    expect(log.pending).toBe(false);
    const all = log.files().flatMap((f) => readJsonl<{ n: number }>(f).records.map((r) => r.n));
    expect(all).toEqual([...Array(100).keys()]);
    log.close();
  });
});
