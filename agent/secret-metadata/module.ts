import { lazy } from '../core/lazy.js';
import { defineModule } from '../core/module.js';
import { secretMetadataHandlers } from './handlers.js';

/**
 * Metadata of the secrets the program declares (docs/operations.md § Secrets). Built on the first
 * request: registering the declarations parses the program, which stays off the agent's start.
 */
export const secretMetadataModule = defineModule({
  name: 'secret-metadata',
  open({ use, boot }) {
    const settings = use('settings');
    const deps = { project: use('project'), bus: use('bus'), envVariableSet: settings.envVariableSet };
    const secretMetadata = lazy(async () =>
      (await import('./secret-metadata-service.js')).SecretMetadataService.open(settings.stateDir, deps, (m) => boot.log(`warning: ${m}`)),
    );
    return { provides: { secretMetadata }, handlers: secretMetadataHandlers, close: () => secretMetadata.loaded()?.close() };
  },
});
