import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { SPECS } from '../../api/index.js';
import { tempDir } from '../helpers/agent-harness.js';

/**
 * The Python client's operations are generated from the contract (clients/python/scripts/generate.mjs
 * reads the compiled `dist/api/index.js`): regenerating must give the checked-in files byte for byte,
 * so a contract change without `npm run build && npm run clients:generate:python` fails here.
 */
const REPO = path.resolve(__dirname, '../..');
const PKG = path.join(REPO, 'clients/python/svc_client');
const run = promisify(execFile);

describe('Python client: generated surface', () => {
  it('the compiled contract the generator reads has the same operations as api/ (rebuild if not)', async () => {
    const dist = await import(path.join(REPO, 'dist/api/index.js'));
    expect(dist.SPECS.map((s: { id: string }) => s.id), 'dist/ is stale: run npm run build').toEqual(SPECS.map((s) => s.id));
  });

  it('regenerating gives the checked-in _operations.py and _operations.json', async () => {
    const out = tempDir('svc-pygen-');
    await run(process.execPath, [path.join(REPO, 'clients/python/scripts/generate.mjs'), out], { cwd: REPO });
    for (const file of ['_operations.py', '_operations.json']) {
      const fresh = fs.readFileSync(path.join(out, file), 'utf8');
      const checkedIn = fs.readFileSync(path.join(PKG, file), 'utf8');
      expect(fresh === checkedIn, `clients/python/svc_client/${file} is stale: run npm run build && npm run clients:generate:python`).toBe(true);
    }
  });

  it('the package is Python 3.9 syntax (ast feature_version) and its version is the repository\'s', async () => {
    const files = fs.readdirSync(PKG).filter((f) => f.endsWith('.py')).map((f) => path.join(PKG, f));
    files.push(path.join(REPO, 'clients/python/tests/test_client.py'));
    const check = 'import ast, sys\nfor f in sys.argv[1:]:\n    ast.parse(open(f, encoding="utf-8").read(), f, feature_version=(3, 9))\nprint("ok", len(sys.argv) - 1)';
    const { stdout } = await run('python3', ['-c', check, ...files], { cwd: REPO });
    expect(stdout.trim()).toBe(`ok ${files.length}`);
    const version = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')).version;
    expect(fs.readFileSync(path.join(PKG, '_operations.py'), 'utf8')).toContain(`__version__ = "${version}"`);
  });

  it('has one method per operation of the contract, with its method, path and access', () => {
    const dump = JSON.parse(fs.readFileSync(path.join(PKG, '_operations.json'), 'utf8'));
    expect(dump.count).toBe(SPECS.length);
    expect(dump.operations.map((o: { id: string }) => o.id)).toEqual(SPECS.map((s) => s.id));
    const py = fs.readFileSync(path.join(PKG, '_operations.py'), 'utf8');
    const names = new Set(dump.operations.map((o: { python: string }) => o.python));
    expect(names.size).toBe(SPECS.length);
    for (const o of dump.operations) {
      expect(py, o.id).toContain(`    def ${o.python}(`);
      expect(o.python).toMatch(/^[a-z][a-z0-9_]*$/);
    }
    expect(dump.operations.find((o: { id: string }) => o.id === 'listDevices')).toMatchObject({ python: 'list_devices', method: 'GET', path: '/v1/devices' });
    expect(dump.operations.find((o: { id: string }) => o.id === 'testAlert')).toMatchObject({ python: 'test_alert', method: 'POST', access: 'action:Operate' });
  });
});
