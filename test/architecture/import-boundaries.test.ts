/**
 * The layering of docs/architecture.md ("Layers", "Adding a domain"), checked on the sources:
 * - the contract `api/` imports nothing but itself and zod, so the relay, the clients and the panel
 *   can read it without loading the agent;
 * - domain folders of the agent import no transport (HTTP, gRPC, WebSocket, JSON-RPC, CLI);
 * - the HAL rules live in ./hal-boundaries.test.ts.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
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

describe('the relay (relay/)', () => {
  /** What the relay may use of the agent: credentials, durable state, settings, the error type, CLI argument errors, the panel's static files. */
  const ALLOWED = ['agent/security/', 'agent/state/', 'agent/settings/', 'agent/core/errors.js', 'agent/core/validate.js', 'agent/core/json-body.js', 'agent/core/panel-files.js', 'agent/core/package-root.js', 'agent/cli/args.js'];

  it('imports the contract and the shared security/state/settings code, nothing of the agent runtime or domains', () => {
    const files = sourceFiles('relay');
    expect(files).toContain('relay/server.ts');
    const bad = files.flatMap((f) =>
      importsOf(f)
        .filter((i) => topFolder(i) === 'agent' && !ALLOWED.some((a) => i === a || (a.endsWith('/') && i.startsWith(a))))
        .map((i) => `${f} -> ${i}`),
    );
    expect(bad).toEqual([]);
  });

  it('is reached from the agent CLI only through a dynamic import (the start bundle does not carry it)', () => {
    const agentFiles = sourceFiles('agent');
    const staticRelay = agentFiles.flatMap((f) => {
      const src = readFileSync(path.join(ROOT, f), 'utf8');
      // Static imports only, resolved: the relay is the top-level relay/ folder (agent/transports/relay is the agent's own trunk).
      return [...src.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+['"](\.[^'"]*)['"]/gm)]
        .map((m) => path.posix.normalize(path.posix.join(path.posix.dirname(f), m[1]!)))
        .filter((resolved) => topFolder(resolved) === 'relay')
        .map((resolved) => `${f} -> ${resolved}`);
    });
    expect(staticRelay).toEqual([]);
    expect(readFileSync(path.join(ROOT, 'agent/cli/main.ts'), 'utf8')).toContain("await import('../../relay/cli.js')");
  });
});
