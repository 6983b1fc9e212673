import { defineModule } from '../core/module.js';
import { metaHandlers } from './handlers.js';

/** The API describing itself: health, versions, instance, tenant, dashboard, OpenAPI. No state of its own. */
export const metaModule = defineModule({
  name: 'meta',
  open: () => ({ handlers: metaHandlers }),
});
