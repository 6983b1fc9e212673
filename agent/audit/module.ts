import { defineModule } from '../core/module.js';
import { auditHandlers } from './handlers.js';
import { MutationAudit } from './mutation-audit.js';

/** The hash-chained audit log and its read/export operations; opened before the domains whose changes it records, closed after them. */
export const auditModule = defineModule({
  name: 'audit',
  open({ use, boot }) {
    const settings = use('settings');
    const audit = new MutationAudit(settings.stateDir, settings.mutationAuditPath, boot.secrets.auditSigningKey, use('bus'), use('alerts'), boot.log, {
      segmentBytes: settings.auditSegmentBytes,
    });
    return { provides: { audit }, handlers: auditHandlers, close: () => audit.close() };
  },
});
