import * as z from 'zod';
import { defineSpec } from '../spec.js';

const installBody = z.lazy(() =>
  z.object({
    path: z.string().min(1).max(4096).optional(),
    name: z.string().min(1).max(200).optional(),
    approve_dangerous: z.boolean().optional(),
  }),
);
const searchQuery = z.lazy(() => z.object({ q: z.string().max(200).optional() }));

/**
 * Plugins (docs/plugins.md): versioned manifests, trust tiers, install from a directory or a tarball
 * with an Ed25519 signature check, enable/disable, and the control-center panel bundles.
 */
export const listPlugins = defineSpec({
  id: 'listPlugins',
  group: 'plugins',
  summary: 'Installed plugins, sorted by name, with manifest, trust tier and control-center panels',
  method: 'GET',
  path: '/v1/plugins',
  access: { kind: 'read' },
  cli: ['plugins', 'list'],
});

export const listControlCenterPlugins = defineSpec({
  id: 'listControlCenterPlugins',
  group: 'plugins',
  summary: 'Enabled control-center UI plugins and their panels',
  method: 'GET',
  path: '/v1/plugins/control-center',
  access: { kind: 'read' },
  cli: ['plugins', 'control-center'],
});

export const getPluginBundle = defineSpec({
  id: 'getPluginBundle',
  group: 'plugins',
  summary: "A UI plugin's built panel bundle (index.js of its install directory)",
  method: 'GET',
  path: '/v1/plugins/control-center/{name}/bundle',
  access: { kind: 'read' },
  cli: ['plugins', 'bundle'],
});

export const searchPlugins = defineSpec<Record<string, never>, z.infer<typeof searchQuery>>({
  id: 'searchPlugins',
  group: 'plugins',
  summary: 'Search the plugin registry index by name, description or type',
  method: 'GET',
  path: '/v1/plugins/search',
  access: { kind: 'read' },
  cli: ['plugins', 'search'],
  cliArgs: ['q'],
  query: searchQuery,
});

export const installPlugin = defineSpec<z.infer<typeof installBody>>({
  id: 'installPlugin',
  group: 'plugins',
  summary: 'Install a plugin from a directory or a .tar.gz inside the project; the signature is verified first',
  method: 'POST',
  path: '/v1/plugins/install',
  access: { kind: 'action', action: 'Provision' },
  cli: ['plugins', 'install'],
  cliArgs: ['path'],
  body: installBody,
});

export const enablePlugin = defineSpec({
  id: 'enablePlugin',
  group: 'plugins',
  summary: 'Enable an installed plugin',
  method: 'POST',
  path: '/v1/plugins/{name}/enable',
  access: { kind: 'action', action: 'Operate' },
  cli: ['plugins', 'enable'],
  body: z.lazy(() => z.object({})),
});

export const disablePlugin = defineSpec({
  id: 'disablePlugin',
  group: 'plugins',
  summary: 'Disable an installed plugin',
  method: 'POST',
  path: '/v1/plugins/{name}/disable',
  access: { kind: 'action', action: 'Operate' },
  cli: ['plugins', 'disable'],
  body: z.lazy(() => z.object({})),
});

export const pluginSpecs = [listPlugins, listControlCenterPlugins, getPluginBundle, searchPlugins, installPlugin, enablePlugin, disablePlugin];
