import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessOf } from '../../agent/core/operation.js';
import { SPECS } from '../../api/index.js';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';
import { REPO_ROOT } from '../helpers/spawn-agent.js';

/**
 * Answers carry project-relative paths only (docs/security.md §5, "Program files"). The attack that
 * found the default secrets derivable started from absolute paths in open answers (the knowledge
 * store of assure/heal, `config_path`, an entity's `project_root`). This walks the operation table:
 * every parameter-free GET and every program POST, anonymous and with an operator key, in the default
 * layout (state directory inside the project root), and finds neither the project root nor the state
 * directory in any answer. Only administrator routes may show absolute state paths.
 */
const OPERATOR = '0d'.repeat(32);
let agent: RunningAgent;
let root: string;

beforeAll(async () => {
  root = path.join(tempDir('svc-paths-'), 'project');
  fs.cpSync(path.join(REPO_ROOT, 'demo'), root, { recursive: true, filter: (src) => !src.includes('.svc-control-center') });
  const stateDir = path.join(root, '.svc-control-center');
  fs.mkdirSync(stateDir, { recursive: true });
  fs.writeFileSync(path.join(stateDir, 'keys.json'), JSON.stringify([{ key_id: 'op', token: OPERATOR, role: 'operator' }]));
  agent = await startAgent({
    stateDir,
    configPath: path.join(root, 'svc.toml'),
    programPath: path.join(root, 'programs', 'patrol.sd'),
    env: { SVC_API_KEYS_FILE: path.join(stateDir, 'keys.json') },
  });
});
afterAll(async () => {
  await agent.close();
});

function leaks(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(/"[^"]*"/g)) if (m[0].includes(root)) found.push(m[0].slice(0, 160));
  return found;
}

describe('no answer tells where the project or the state directory sit', () => {
  const reads = SPECS.filter((o) => o.method === 'GET' && !o.path.includes('{') && accessOf(o).kind !== 'admin');
  const programPosts = SPECS.filter((o) => o.method === 'POST' && o.path.startsWith('/v1/programs/') && accessOf(o).kind === 'read');

  it('walks a meaningful share of the table', () => {
    expect(reads.length).toBeGreaterThan(20);
    expect(programPosts.length).toBeGreaterThan(8);
  });

  for (const who of ['anonymous', 'operator'] as const) {
    it(`${who}: parameter-free GETs`, async () => {
      const headers: Record<string, string> = who === 'operator' ? { authorization: `Bearer ${OPERATOR}` } : {};
      const found: string[] = [];
      for (const op of reads) {
        const res = await agent.fetch(op.path, { headers });
        for (const l of leaks(await res.text())) found.push(`${op.path}: ${l}`);
      }
      expect(found).toEqual([]);
    });

    it(`${who}: program POSTs`, async () => {
      const headers: Record<string, string> = { 'content-type': 'application/json', ...(who === 'operator' ? { authorization: `Bearer ${OPERATOR}` } : {}) };
      const found: string[] = [];
      for (const op of programPosts) {
        const file = op.path.includes('audit/decisions') || op.path.includes('replay') ? 'programs/none.trace' : 'programs/patrol.sd';
        const res = await agent.fetch(op.path, { method: 'POST', headers, body: JSON.stringify({ file }) });
        for (const l of leaks(await res.text())) found.push(`${op.path}: ${l}`);
      }
      // Errors too: a missing file is named relative to the project.
      const missing = await agent.fetch('/v1/programs/readiness', { method: 'POST', headers, body: '{"file":"programs/nope.sd"}' });
      expect(missing.status).toBe(404);
      for (const l of leaks(await missing.text())) found.push(`missing file: ${l}`);
      expect(found).toEqual([]);
    });
  }
});
