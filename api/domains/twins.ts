import * as z from 'zod';
import { defineSpec } from '../spec.js';

/**
 * Mission twins (docs/twins.md): timestamped snapshots of a program's mission-twin report, kept per
 * twin id and tenant with a history ring. Reads are open (read-auth policy); writes need Operate and
 * never overwrite a twin stored under another tenant (403 `tenant_mismatch`).
 *
 * Order matters: the fixed paths (`usage`, `sync`, `import-replay`) are listed before `{id}` so the
 * router matches them first; `GET /v1/twins/sync` is therefore a lookup of a twin named `sync`.
 */
const syncQuery = z.lazy(() =>
  z.object({
    twin_id: z.string().max(128).optional(),
    /** A `.trace` file inside the project root whose run is folded into the snapshot (`mission_twin.replay`). */
    trace: z.string().max(4096).optional(),
  }),
);

/** A pushed snapshot: checked field by field by the service so the 400 names the field (`invalid snapshot JSON: <field>`). */
const snapshotBody = z.lazy(() => z.record(z.string(), z.unknown()));

const importBody = z.lazy(() =>
  z.object({
    program: z.string().max(4096).optional(),
    source: z.string().max(4096).optional(),
    trace: z.string().max(4096).optional(),
    twin_id: z.string().max(128).optional(),
  }),
);

const read = { kind: 'read' } as const;
const operate = { kind: 'action', action: 'Operate' } as const;

export const listTwins = defineSpec({
  id: 'listTwins',
  group: 'twins',
  summary: "Latest snapshot summary of every twin of this instance's tenant, sorted by twin id",
  method: 'GET',
  path: '/v1/twins',
  access: read,
  rpc: { name: 'ListTwins', request: 'Empty' },
  cli: ['twins', 'list'],
});

export const getTwinUsage = defineSpec({
  id: 'getTwinUsage',
  group: 'twins',
  summary: "Twin and snapshot counts of this instance's tenant and the process's push, sync and history counters",
  method: 'GET',
  path: '/v1/twins/usage',
  access: read,
  rpc: { name: 'GetTwinUsage', request: 'Empty' },
  cli: ['twins', 'usage'],
});

export const syncTwin = defineSpec<Record<string, never>, z.infer<typeof syncQuery>>({
  id: 'syncTwin',
  group: 'twins',
  summary: 'Snapshot the mission twin of the loaded program (?twin_id=, ?trace= a recorded run inside the project)',
  description: 'The body is ignored. The twin id defaults to the program file stem, lower-cased, dots as dashes.',
  method: 'POST',
  path: '/v1/twins/sync',
  access: operate,
  rpc: { name: 'SyncTwin', request: 'QueryRequest' },
  cli: ['twins', 'sync'],
  query: syncQuery,
});

export const importTwinReplay = defineSpec<z.infer<typeof importBody>>({
  id: 'importTwinReplay',
  group: 'twins',
  summary: 'Snapshot a twin from a program or a recorded trace file inside the project root',
  description:
    '`program` (or `source`) names a `.sd` file or a `.trace` file; `trace` names a trace of that program. A trace is replayed for its frames, events, final state and emergency stops (`mission_twin.replay`); its program is the trace\'s `source`.',
  method: 'POST',
  path: '/v1/twins/import-replay',
  access: operate,
  rpc: { name: 'ImportTwinReplay', request: 'JsonBodyRequest' },
  cli: ['twins', 'import-replay'],
  cliArgs: ['program'],
  body: importBody,
});

export const getTwin = defineSpec({
  id: 'getTwin',
  group: 'twins',
  summary: 'The latest snapshot of one twin (403 when it belongs to another tenant)',
  method: 'GET',
  path: '/v1/twins/{id}',
  access: read,
  rpc: { name: 'GetTwin', request: 'EntityIdRequest' },
  cli: ['twins', 'get'],
});

export const getTwinHistory = defineSpec({
  id: 'getTwinHistory',
  group: 'twins',
  summary: "One twin's snapshot history, oldest first (ring of 50)",
  method: 'GET',
  path: '/v1/twins/{id}/history',
  access: read,
  rpc: { name: 'GetTwinHistory', request: 'EntityIdRequest' },
  cli: ['twins', 'history'],
});

export const pushTwinSnapshot = defineSpec<Record<string, unknown>>({
  id: 'pushTwinSnapshot',
  group: 'twins',
  summary: 'Store a snapshot pushed by a remote site under this twin id (tenant stamped by the agent)',
  description: 'Required: `program` (string) and `mission_twin` with `risks.mission_ready` (boolean) and `risks.readiness_score` (integer). `twin_id`, when given, must equal the path id.',
  method: 'POST',
  path: '/v1/twins/{id}/snapshots',
  access: operate,
  rpc: { name: 'PushTwinSnapshot', request: 'EntityBodyRequest' },
  cli: ['twins', 'push'],
  body: snapshotBody,
});

export const twinSpecs = [listTwins, getTwinUsage, syncTwin, importTwinReplay, getTwin, getTwinHistory, pushTwinSnapshot];
