import {
  disablePlugin,
  enablePlugin,
  getPluginBundle,
  installPlugin,
  listControlCenterPlugins,
  listPlugins,
  searchPlugins,
} from '../../api/domains/plugins.js';
import { handlersFor } from '../core/handlers.js';

const on = handlersFor(['plugins']);

/** Plugins: list, panels, bundles, search, install, enable, disable (docs/plugins.md). */
export const pluginHandlers = [
  on(listPlugins, async (_i, ctx) => (await ctx.services.plugins.get()).list()),
  on(listControlCenterPlugins, async (_i, ctx) => (await ctx.services.plugins.get()).controlCenter()),
  on(getPluginBundle, async ({ params }, ctx) => (await ctx.services.plugins.get()).bundle(params['name']!)),
  on(searchPlugins, async ({ query }, ctx) => (await ctx.services.plugins.get()).search(query.q)),
  on(installPlugin, async ({ body }, ctx) => (await ctx.services.plugins.get()).install(body)),
  on(enablePlugin, async ({ params }, ctx) => (await ctx.services.plugins.get()).setState(params['name']!, 'enabled')),
  on(disablePlugin, async ({ params }, ctx) => (await ctx.services.plugins.get()).setState(params['name']!, 'disabled')),
];
