/**
 * The layering of docs/architecture.md ("Layers", "Adding a domain"), checked on the sources:
 * - the contract `api/` imports nothing but itself and zod, so the relay, the clients and the panel
 *   can read it without loading the agent;
 * - domain folders of the agent import no transport (HTTP, gRPC, WebSocket, JSON-RPC, CLI);
 * - the HAL rules live in ./hal-boundaries.test.ts.
 */
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { importsOf, packagesOf, ROOT, sourceFiles, topFolder } from './source-imports.js';

/** Folders of agent/ that are transports or wire them together; every other folder is a domain or a shared layer. */
const TRANSPORT_FOLDERS = new Set(['agent/transports', 'agent/rpc', 'agent/cli']);
const NOT_DOMAINS = new Set([...TRANSPORT_FOLDERS, 'agent/runtime']);
const TRANSPORT_PACKAGES = new Set(['hono', '@hono/node-server', '@hono/node-ws', 'nice-grpc', 'nice-grpc-common', 'nice-grpc-server-reflection', '@grpc/grpc-js', 'ws']);

const agentFolders = readdirSync(path.join(ROOT, 'agent'))
  .map((name) => `agent/${name}`)
  .filter((dir) => statSync(path.join(ROOT, dir)).isDirectory());
const domainFolders = agentFolders.filter((dir) => !NOT_DOMAINS.has(dir));

describe('the contract (api/)', () => {
  const files = sourceFiles('api');

  it('holds the specs of every domain', () => {
    expect(files).toContain('api/index.ts');
    expect(files.filter((f) => f.startsWith('api/domains/')).length).toBeGreaterThan(3);
  });

  it('imports only its own files and zod: no agent code, no transport, no Node API', () => {
    const bad = files.flatMap((f) => [
      ...importsOf(f).filter((i) => topFolder(i) !== 'api').map((i) => `${f} -> ${i}`),
      ...packagesOf(f).filter((p) => p !== 'zod').map((p) => `${f} -> ${p}`),
    ]);
    expect(bad).toEqual([]);
  });
});

describe('domain folders', () => {
  it('are found (the check below is not vacuous)', () => {
    for (const d of ['agent/devices', 'agent/entities', 'agent/programs', 'agent/fleet', 'agent/security', 'agent/meta']) expect(domainFolders).toContain(d);
  });

  it('import no transport: no HTTP, gRPC or WebSocket package, and nothing from agent/transports, agent/rpc or agent/cli', () => {
    const bad = domainFolders.flatMap((dir) =>
      sourceFiles(dir).flatMap((f) => [
        ...importsOf(f)
          .filter((i) => [...TRANSPORT_FOLDERS].some((t) => i.startsWith(`${t}/`)))
          .map((i) => `${f} -> ${i}`),
        ...packagesOf(f)
          .filter((p) => TRANSPORT_PACKAGES.has(p))
          .map((p) => `${f} -> ${p}`),
      ]),
    );
    expect(bad).toEqual([]);
  });

  it('the scanner sees a transport import when there is one', () => {
    expect(packagesOf('x.ts', "import { Hono } from 'hono';\nimport { z } from 'zod';")).toEqual(['hono', 'zod']);
    expect(importsOf('agent/devices/x.ts', "import { a } from '../transports/http/body.js';")).toEqual(['agent/transports/http/body.js']);
  });
});
