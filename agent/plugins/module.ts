import { lazy } from '../core/lazy.js';
import { defineModule } from '../core/module.js';
import { pluginHandlers } from './handlers.js';

/**
 * Plugins (docs/plugins.md). The store lives in the project (`.svc-control-center/plugins/`) and is
 * read on the first plugin request; nothing runs at start, so the service and its tar reader load
 * only when used.
 */
export const pluginsModule = defineModule({
  name: 'plugins',
  open({ use, boot }) {
    const settings = use('settings');
    const deps = { project: use('project'), ...settings.plugins, warn: (m: string) => boot.log(`warning: ${m}`) };
    const plugins = lazy(async () => new (await import('./plugin-service.js')).PluginService(deps));
    return { provides: { plugins }, handlers: pluginHandlers };
  },
});
