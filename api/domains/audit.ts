import * as z from 'zod';
import { defineSpec } from '../spec.js';

/** One record of the hash-chained audit (docs/security.md §10); a wire shape, shared by the agent and the panel. */
export interface AuditRecord {
  id: string;
  timestamp: string;
  event_type: string;
  /** JSON text of the event's payload. */
  payload: string;
  hash: string;
  signature: string;
  signer_id: string;
  signing_key: null;
  previous_hash: string;
}

/** The mutation audit, for Deploy-role principals (docs/security.md §10, "Reading and exporting (Deploy)"). */
export const listAuditMutations = defineSpec({
  id: 'listAuditMutations',
  group: 'audit',
  summary: 'Hash-chained audit records and whether the chain verifies',
  method: 'GET',
  path: '/v1/audit/mutations',
  access: { kind: 'action', action: 'Deploy' },
  rpc: { name: 'ListAuditMutations', request: 'Empty' },
  cli: ['audit', 'mutations'],
});

export const exportAuditMutations = defineSpec<Record<string, never>, { format?: string | undefined }>({
  id: 'exportAuditMutations',
  group: 'audit',
  summary: 'Export the audit as JSON Lines or CEF',
  method: 'GET',
  path: '/v1/audit/mutations/export',
  access: { kind: 'action', action: 'Deploy' },
  cli: ['audit', 'export'],
  query: z.lazy(() => z.object({ format: z.string().optional() })),
});

export const auditSpecs = [listAuditMutations, exportAuditMutations];
