import { defineModule } from '../core/module.js';
import { LEGACY_BINDINGS } from './index.js';

/** Transitional: the domains whose spec and handler are still declared together (`legacy-operation.ts`). */
export const legacyOperationsModule = defineModule({
  name: 'operations',
  open: () => ({ handlers: LEGACY_BINDINGS }),
});
