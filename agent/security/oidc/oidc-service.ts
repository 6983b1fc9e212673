import crypto from 'node:crypto';
import type * as Client from 'openid-client';

/** openid-client (and jose under it) load on first sign-in, not at every agent start. */
let clientModule: Promise<typeof Client> | null = null;
const loadClient = () => (clientModule ??= import('openid-client'));
import { badRequest } from '../../core/errors.js';
import { constantTimeEqual } from '../constant-time.js';
import type { Role } from '../rbac.js';
import type { DirectoryEntry, UserDirectory } from '../users.js';
import { OidcSettingsStore, PENDING_TTL_MS, type OidcDocument, type OidcSettingsInput } from './oidc-settings.js';
import { DEFAULT_REDIRECT_URI, isLoopbackHttp, validateRedirectUri } from './urls.js';

/** Scopes of every authorization request (docs/security-oidc.md §3 step 1). */
export const OIDC_SCOPE = 'openid profile email';
/** Seconds allowed for each request to the identity provider. */
const PROVIDER_TIMEOUT_SECS = 10;
/** A discovered configuration is reused this long (the provider's metadata rarely changes). */
const DISCOVERY_CACHE_MS = 5 * 60 * 1000;

/** The settings as GET /v1/admin/oidc shows them: never the secret, never the pending authorization. */
export interface OidcSettingsView {
  enabled: boolean;
  issuer: string;
  client_id: string;
  client_secret_set: boolean;
  group_role_map: Record<string, Role>;
  last_sync_at: string | null;
  /** The redirect URI an authorize-url call without one would use (stored → env → default). */
  redirect_uri: string;
  /** Issuer, client id and secret are all set: an authorization can be started. */
  oauth_ready: boolean;
  persist_path: string;
}

export interface AuthorizationStart {
  authorize_url: string;
  state: string;
  redirect_uri: string;
}

export interface CallbackInput {
  code?: string | undefined;
  state?: string | undefined;
  /** RFC 9207 `iss` authorization-response parameter, when the landing page forwarded it. */
  iss?: string | undefined;
}

/** `svc-` + 16 random bytes hex (docs/wire-decisions.md D7). */
export function newState(): string {
  return `svc-${crypto.randomBytes(16).toString('hex')}`;
}

/** `svc-pkce-` + 32 random bytes base64url: 52 characters of the RFC 7636 unreserved set (docs/wire-decisions.md D7). */
export function newVerifier(): string {
  return `svc-pkce-${crypto.randomBytes(32).toString('base64url')}`;
}

/** The OAuth error code and description of a provider refusal, else the library's message (never a token). */
function describeProviderError(err: unknown): string {
  const e = err as { error?: unknown; error_description?: unknown; message?: unknown };
  if (typeof e?.error === 'string') {
    return typeof e.error_description === 'string' && e.error_description ? `${e.error}: ${e.error_description}` : e.error;
  }
  return typeof e?.message === 'string' ? e.message : String(err);
}

/**
 * OIDC sign-in with the authorization-code flow and PKCE S256 (docs/security-oidc.md §3, docs/wire-decisions.md D7), on
 * `openid-client`. This class talks to the identity provider and keeps the settings and the pending
 * authorization; importing the user and issuing our session is `sign-in.ts`.
 *
 * The provider's access token is used for one userinfo request and then dropped: it is never stored,
 * returned, or accepted as an API credential.
 */
export class OidcService {
  private discovered: { key: string; config: Client.Configuration; at: number } | null = null;

  private constructor(
    private readonly store: OidcSettingsStore,
    private readonly envRedirectUri: string | null,
    private readonly log: (line: string) => void,
  ) {}

  static async open(options: { stateDir: string; redirectUri: string | null; log?: (line: string) => void }): Promise<OidcService> {
    const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
    const store = await OidcSettingsStore.open(options.stateDir, (m) => log(`warning: ${m}`));
    return new OidcService(store, options.redirectUri, log);
  }

  get file(): string {
    return this.store.file;
  }

  /** OIDC login is offered to users (GET /v1/auth/config `oidc_login_enabled`): enabled ∧ issuer ∧ client id ∧ secret. */
  loginEnabled(): boolean {
    const d = this.store.current;
    return d.enabled && d.issuer !== '' && d.client_id !== '' && d.client_secret !== '';
  }

  /** The configured issuer, or null. */
  issuer(): string | null {
    return this.store.current.issuer || null;
  }

  get groupRoleMap(): Record<string, Role> {
    return { ...this.store.current.group_role_map };
  }

  view(): OidcSettingsView {
    const d = this.store.current;
    return {
      enabled: d.enabled,
      issuer: d.issuer,
      client_id: d.client_id,
      client_secret_set: d.client_secret !== '',
      group_role_map: { ...d.group_role_map },
      last_sync_at: d.last_sync_at,
      redirect_uri: this.redirectUri(),
      oauth_ready: d.issuer !== '' && d.client_id !== '' && d.client_secret !== '',
      persist_path: this.store.file,
    };
  }

  configure(input: OidcSettingsInput): OidcSettingsView {
    this.store.update(input);
    this.discovered = null;
    return this.view();
  }

  /** Redirect URI resolution: explicit → stored → `SVC_OIDC_REDIRECT_URI` → the local landing page. */
  redirectUri(explicit?: string): string {
    if (explicit !== undefined && explicit.trim() !== '') return validateRedirectUri(explicit);
    const stored = this.store.current.redirect_uri;
    if (stored) return stored;
    if (this.envRedirectUri) {
      try {
        return validateRedirectUri(this.envRedirectUri);
      } catch (err) {
        throw badRequest(`SVC_OIDC_REDIRECT_URI: ${(err as Error).message}`);
      }
    }
    return DEFAULT_REDIRECT_URI;
  }

  /**
   * Starts an authorization: fresh state and PKCE verifier, stored server-side (replacing any earlier
   * pending one), and the provider's authorization URL carrying the S256 challenge.
   */
  async authorize(options: { redirectUri?: string | undefined; requireEnabled: boolean }): Promise<AuthorizationStart> {
    const d = this.requireClient(options.requireEnabled);
    const redirectUri = this.redirectUri(options.redirectUri);
    const config = await this.configuration(d);
    const client = await loadClient();
    const state = newState();
    const verifier = newVerifier();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: OIDC_SCOPE,
      state,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    this.store.addPending({ state, verifier, redirect_uri: redirectUri, created_at_ms: Date.now() });
    return { authorize_url: url.href, state, redirect_uri: redirectUri };
  }

  /**
   * Completes an authorization: the state must be the pending one (single use, 10 minutes), then the
   * code is exchanged at the token endpoint with the stored PKCE verifier and the userinfo fetched.
   * Returns the userinfo claims.
   */
  async exchange(input: CallbackInput, options: { requireEnabled: boolean }): Promise<Record<string, unknown>> {
    const client = await loadClient();
    const d = this.store.current;
    if (options.requireEnabled && !d.enabled) throw badRequest('oidc login is not enabled');
    if (!input.state) throw badRequest('oauth state mismatch');
    // A missing code does not consume the authorization (the user may still come back with one).
    const known = d.pending.some((p) => constantTimeEqual(p.state, input.state!) && Date.now() - p.created_at_ms <= PENDING_TTL_MS);
    if (known && !input.code) throw badRequest('code required');
    // Taken with no await between the lookup and here: a concurrent or later replay finds nothing.
    const pending = this.store.takePending(input.state);
    if (!pending) throw badRequest('oauth state mismatch');
    if (!input.code) throw badRequest('code required');

    const config = await this.configuration(this.requireClient(false));
    const callbackUrl = new URL(pending.redirect_uri);
    callbackUrl.searchParams.set('code', input.code);
    callbackUrl.searchParams.set('state', input.state);
    // RFC 9207: providers that announce the `iss` response parameter make the client require it. With
    // one configured provider there is no mix-up to detect, so a missing value is taken to be ours;
    // a value that was forwarded is checked.
    if (input.iss) callbackUrl.searchParams.set('iss', input.iss);
    else if (config.serverMetadata().authorization_response_iss_parameter_supported) {
      callbackUrl.searchParams.set('iss', config.serverMetadata().issuer);
    }

    let tokens: Awaited<ReturnType<typeof Client.authorizationCodeGrant>>;
    try {
      tokens = await client.authorizationCodeGrant(config, callbackUrl, {
        pkceCodeVerifier: pending.verifier,
        expectedState: pending.state,
      });
    } catch (err) {
      throw badRequest(`oidc token exchange failed: ${describeProviderError(err)}`);
    }
    try {
      const sub = tokens.claims()?.sub;
      const userinfo = await client.fetchUserInfo(config, tokens.access_token, sub ?? client.skipSubjectCheck);
      return { ...userinfo } as Record<string, unknown>;
    } catch (err) {
      throw badRequest(`failed to fetch userinfo: ${describeProviderError(err)}`);
    }
  }

  /** Directory import with the configured group→role map; records `last_sync_at`. */
  importDirectory(users: UserDirectory, entries: DirectoryEntry[]) {
    const result = users.importEntries(entries, this.store.current.group_role_map);
    const lastSyncAt = this.store.markSynced();
    return { ...result, last_sync_at: lastSyncAt };
  }

  flush(): Promise<void> {
    return this.store.flush();
  }

  private requireClient(requireEnabled: boolean): Readonly<OidcDocument> {
    const d = this.store.current;
    if (requireEnabled && !d.enabled) throw badRequest('oidc login is not enabled (set enabled via PUT /v1/admin/oidc)');
    if (!d.issuer) throw badRequest('oidc issuer is not configured');
    if (!d.client_id) throw badRequest('oidc client_id is not configured');
    if (!d.client_secret) throw badRequest('oidc client_secret is not configured');
    return d;
  }

  /** Discovery (`<issuer>/.well-known/openid-configuration`), cached briefly per issuer and client. */
  private async configuration(d: Readonly<OidcDocument>): Promise<Client.Configuration> {
    const client = await loadClient();
    const key = [d.issuer, d.client_id, crypto.createHash('sha256').update(d.client_secret).digest('hex')].join('\n');
    if (this.discovered && this.discovered.key === key && Date.now() - this.discovered.at < DISCOVERY_CACHE_MS) {
      return this.discovered.config;
    }
    const issuer = new URL(d.issuer);
    // Plain http is only ever allowed for loopback issuers (validated when stored, re-checked here).
    const insecure = isLoopbackHttp(issuer);
    const execute = insecure ? [client.allowInsecureRequests] : [];
    let config: Client.Configuration;
    try {
      config = await client.discovery(issuer, d.client_id, d.client_secret, client.ClientSecretPost(d.client_secret), {
        timeout: PROVIDER_TIMEOUT_SECS,
        execute,
      });
    } catch (err) {
      this.log(`oidc: discovery at ${d.issuer} failed: ${describeProviderError(err)}`);
      throw badRequest('failed to fetch discovery document');
    }
    const meta = config.serverMetadata();
    if (!meta.authorization_endpoint) throw badRequest('discovery document has no authorization_endpoint');
    if (!meta.token_endpoint) throw badRequest('discovery document has no token_endpoint');
    // The secret goes in the form (as the reference does) unless the provider only takes HTTP Basic
    // (RFC 8414: an absent list means client_secret_basic).
    const methods = meta.token_endpoint_auth_methods_supported ?? ['client_secret_basic'];
    if (!methods.includes('client_secret_post') && methods.includes('client_secret_basic')) {
      config = new client.Configuration(meta, d.client_id, d.client_secret, client.ClientSecretBasic(d.client_secret));
      config.timeout = PROVIDER_TIMEOUT_SECS;
      if (insecure) client.allowInsecureRequests(config);
    }
    this.discovered = { key, config, at: Date.now() };
    return config;
  }
}
