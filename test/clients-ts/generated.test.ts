import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import * as api from '../../api/index.js';
import { SPECS, accessLabel, accessOf, isMutation, pathParams } from '../../api/index.js';
import { renderOperations } from '../../clients/typescript/scripts/render.mjs';
import { OPERATIONS, SvcClient } from '../../clients/typescript/src/index.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const CHECKED_IN = path.join(ROOT, 'clients/typescript/src/generated/operations.ts');

describe('clients/typescript/src/generated/operations.ts', () => {
  it('is exactly what the contract generates (regenerated into a temp dir and compared)', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-client-gen-'));
    const fresh = path.join(dir, 'operations.ts');
    fs.writeFileSync(fresh, renderOperations(api, z));
    const same = fs.readFileSync(fresh, 'utf8') === fs.readFileSync(CHECKED_IN, 'utf8');
    fs.rmSync(dir, { recursive: true, force: true });
    expect(same, 'clients/typescript/src/generated/operations.ts is stale: run `npm run clients:generate` and commit the result').toBe(true);
  });

  it('has one method and one table row per operation, with its method, path and access rule', () => {
    expect(Object.keys(OPERATIONS)).toEqual(SPECS.map((o) => o.id));
    const client = new SvcClient({ baseUrl: 'http://127.0.0.1:1' });
    for (const op of SPECS) {
      const row = OPERATIONS[op.id as keyof typeof OPERATIONS];
      expect(row.method, op.id).toBe(op.method);
      expect(row.path, op.id).toBe(op.path);
      expect(row.access, op.id).toBe(accessLabel(accessOf(op)));
      expect(row.mutation, op.id).toBe(isMutation(op));
      const fn = (client as unknown as Record<string, unknown>)[op.id];
      expect(typeof fn, op.id).toBe('function');
      // path parameters first, then body/query, then options
      expect((fn as (...a: unknown[]) => unknown).length, op.id).toBeGreaterThanOrEqual(pathParams(op.path).length);
    }
  });

  it('the client package compiles on its own (ESM + declarations, DOM lib, no Node types)', () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-client-build-'));
    execFileSync(path.join(ROOT, 'node_modules/.bin/tsc'), ['-p', path.join(ROOT, 'clients/typescript/tsconfig.json'), '--outDir', out], { stdio: 'pipe' });
    expect(fs.existsSync(path.join(out, 'index.js'))).toBe(true);
    expect(fs.existsSync(path.join(out, 'index.d.ts'))).toBe(true);
    expect(fs.existsSync(path.join(out, 'generated/operations.d.ts'))).toBe(true);
    fs.rmSync(out, { recursive: true, force: true });
  });
});

/**
 * Compile-time checks of the generated signatures (the root `npm run typecheck` compiles this file):
 * path parameters are required strings and bodies are typed from the contract's zod schemas.
 */
export function typedSurface(c: SvcClient): void {
  void c.getDevice('imu-1');
  void c.patchDevice('imu-1', { lifecycle_state: 'degraded' });
  void c.testAlert({ message: 'hi' });
  void c.testAlert();
  // @ts-expect-error a path parameter is required
  void c.getDevice();
  // @ts-expect-error a lifecycle state outside the contract's vocabulary
  void c.patchDevice('imu-1', { lifecycle_state: 'sleeping' });
  // @ts-expect-error the body of testAlert has no such field type
  void c.testAlert({ message: 42 });
}
