import { defineModule } from '../core/module.js';
import { ApiKeyStore } from './api-keys.js';
import { Credentials } from './credentials.js';
import { adminHandlers, authHandlers } from './handlers.js';
import { oidcHandlers } from './oidc/handlers.js';
import { OidcService } from './oidc/oidc-service.js';
import { RateLimiter } from './rate-limit.js';
import { SessionTokens } from './sessions.js';
import { UserDirectory } from './users.js';

/**
 * Credentials (API keys, session tokens), the operator directory, OIDC sign-in and the rate limiter;
 * the auth, RBAC, admin (keys, users) and OIDC operations.
 */
export const securityModule = defineModule({
  name: 'security',
  async open({ use, boot }) {
    const settings = use('settings');
    const { secrets, log } = boot;
    const users = await UserDirectory.open(settings.stateDir, use('project').config?.humans ?? []);
    const credentials = new Credentials(
      await ApiKeyStore.open({
        file: settings.apiKeysFile,
        pepper: secrets.pepper,
        // Keys files of earlier versions were hashed with the specification's fallback pepper.
        legacyPepper: secrets.explicit.pepper ? null : settings.legacyPepper,
        tenantId: settings.tenantId,
        envKey: settings.apiKey,
        log,
      }),
      new SessionTokens({ ...settings.session, secret: secrets.sessionSecret, tenantId: settings.tenantId }),
      // Sessions are checked against the directory on every request and every refresh.
      users,
    );
    const oidc = await OidcService.open({ stateDir: settings.stateDir, redirectUri: settings.oidc.redirectUri, log });
    return {
      provides: { users, credentials, oidc, rateLimiter: new RateLimiter(settings.rateLimitPerMinute) },
      handlers: [...authHandlers, ...adminHandlers, ...oidcHandlers],
      async close() {
        await users.flush();
        await oidc.flush();
        await credentials.keys.flush();
      },
    };
  },
});
