import { exportAuditMutations, listAuditMutations } from '../../api/domains/audit.js';
import { API_VERSION } from '../../api/versions.js';
import { badRequest } from '../core/errors.js';
import { handlersFor } from '../core/handlers.js';
import { toCefLine, toJsonlLine } from './export-formats.js';

/** The mutation audit, for Deploy-role principals (docs/security.md §10, "Reading and exporting (Deploy)"). */
const on = handlersFor(['audit']);

export const auditHandlers = [
  on(listAuditMutations, (_i, ctx) => {
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
  }),
  on(exportAuditMutations, ({ query }, ctx) => {
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
  }),
];
