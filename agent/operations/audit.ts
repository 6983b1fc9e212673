import * as z from 'zod';
import { badRequest } from '../core/errors.js';
import { defineOperation, type Operation } from './legacy-operation.js';
import { toCefLine, toJsonlLine } from '../audit/export-formats.js';
import { API_VERSION } from '../../api/versions.js';

/** The mutation audit, for Deploy-role principals (api-behaviour §10.10). */
export const auditOperations: Operation[] = [
  defineOperation({
    id: 'listAuditMutations',
    group: 'audit',
    summary: 'Hash-chained audit records and whether the chain verifies',
    method: 'GET',
    path: '/v1/audit/mutations',
    access: { kind: 'action', action: 'Deploy' },
    rpc: { name: 'ListAuditMutations', request: 'Empty' },
    cli: ['audit', 'mutations'],
    handler: (_i, ctx) => {
      const audit = ctx.services.audit;
      // Read from the chain's files (all segments, streamed), not from memory: docs/security.md §10.
      const records = [...audit.chain.records()];
      const v = audit.chain.verification;
      return {
        version: API_VERSION,
        audit: { records, provenance: [], mission: null, exported_at: new Date().toISOString() },
        // Absolute state paths go to administrators only (docs/security.md §5, "Program files"); a Deploy-role reader gets the file name.
        persist_path: ctx.principal?.role === 'administrator' ? audit.chain.file : audit.chain.file.split(/[\\/]/).pop(),
        record_count: records.length,
        chain_valid: v.valid,
        ...(v.valid ? {} : { chain_break_at: v.breakAt, chain_break_reason: v.reason }),
        ...(v.tornTail ? { torn_tail: true } : {}),
        ...(v.foreignSigner > 0 ? { records_signed_by_previous_keys: v.foreignSigner } : {}),
      };
    },
  }),
  defineOperation<Record<string, never>, { format?: string | undefined }>({
    id: 'exportAuditMutations',
    group: 'audit',
    summary: 'Export the audit as JSON Lines or CEF',
    method: 'GET',
    path: '/v1/audit/mutations/export',
    access: { kind: 'action', action: 'Deploy' },
    cli: ['audit', 'export'],
    query: z.lazy(() => z.object({ format: z.string().optional() })),
    handler: ({ query }, ctx) => {
      const format = (query.format ?? 'jsonl').toLowerCase();
      if (format !== 'jsonl' && format !== 'cef') throw badRequest('format must be cef or jsonl');
      // One line per record, streamed from the chain's files (all segments), oldest first.
      const toLine = format === 'cef' ? toCefLine : toJsonlLine;
      let content = '';
      let count = 0;
      for (const r of ctx.services.audit.chain.records()) {
        content += `${toLine(r)}\n`;
        count++;
      }
      return { version: API_VERSION, format, record_count: count, content };
    },
  }),
];
