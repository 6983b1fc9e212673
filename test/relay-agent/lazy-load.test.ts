import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, sourceFiles } from '../architecture/source-imports.js';

/**
 * The relay trunk costs nothing to an agent without `--relay`: its code (and mqtt.js, which the HAL
 * also loads only for a configured broker) is reached only through the dynamic import in
 * `Agent.listen()`, so the bundler puts it in its own chunk, never in the start-up path.
 */
describe('the relay trunk is loaded only when configured', () => {
  const STATIC = /^\s*(?:import|export)\s+(?!type\b)[^'"]*?from\s+['"]([^'"]+)['"]/gm;

  it('no module outside agent/transports/relay imports it statically (type-only imports are erased)', () => {
    const offenders: string[] = [];
    for (const file of [...sourceFiles('agent'), ...sourceFiles('api')]) {
      if (file.startsWith('agent/transports/relay/')) continue;
      const source = readFileSync(path.join(ROOT, file), 'utf8');
      for (const m of source.matchAll(STATIC)) {
        if (m[1]!.includes('transports/relay/') || m[1] === 'mqtt') offenders.push(`${file} -> ${m[1]}`);
      }
    }
    // hal/ imports mqtt, but the agent reaches the HAL lazily (test/architecture/hal-boundaries.test.ts).
    expect(offenders).toEqual([]);
    expect(readFileSync(path.join(ROOT, 'agent/runtime/agent.ts'), 'utf8')).toContain("import('../transports/relay/relay-trunk.js')");
  });

  it.skipIf(!existsSync(path.join(ROOT, 'dist/bundle/svc.mjs')))('the built entry chunk holds none of it (npm run build)', () => {
    const dir = path.join(ROOT, 'dist/bundle');
    const entry = readFileSync(path.join(dir, 'svc.mjs'), 'utf8');
    expect(entry).not.toContain('relay-outbox.jsonl');
    expect(entry).not.toContain('mqttjs_');
    // The entry names the trunk's chunk only in a dynamic import (a build does not clean old chunks).
    const trunkChunk = /import\("\.\/(relay-trunk-[A-Z0-9]+\.mjs)"\)/.exec(entry)?.[1];
    expect(trunkChunk).toBeDefined();
    expect(readdirSync(dir)).toContain(trunkChunk);
    expect(readFileSync(path.join(dir, trunkChunk!), 'utf8')).toContain('relay-outbox.jsonl');
  });
});
