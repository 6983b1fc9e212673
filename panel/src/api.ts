import { SvcClient, PermissionError, SvcError } from '../../clients/typescript/src/index.js';

/**
 * Where the credential lives: this tab only, gone when the tab closes (docs/panel.md § Sign-in). It is
 * an API key, or the agent's own session token from an OIDC sign-in (then `KIND_STORAGE` says so).
 */
const KEY_STORAGE = 'svc.panel.apiKey';
const KIND_STORAGE = 'svc.panel.credentialKind';

export type CredentialKind = 'key' | 'session';

/** Who is signed in, from `GET /v1/rbac/me` (or, on a relay, from its fleet list). */
export interface Session {
  client: SvcClient;
  keyId: string | null;
  role: string;
  permissions: readonly string[];
  /** How the principal signed in: an API key, or an OIDC session token (docs/security-oidc.md §3). */
  kind: CredentialKind;
  userId?: string | null;
  /** Set when the panel is served by a relay (docs/panel.md § Served by a relay): the key's tenant there. */
  relayTenant?: string;
}

/** The agent that served the panel: the page's own origin and path prefix (works behind the relay too). */
export function baseUrl(): string {
  const { origin, pathname } = window.location;
  const prefix = pathname.replace(/\/control-center\/?$/, '').replace(/\/$/, '');
  return `${origin}${prefix}`;
}

export function storedKey(): string | null {
  try {
    return window.sessionStorage.getItem(KEY_STORAGE);
  } catch {
    return null;
  }
}

export function storedKind(): CredentialKind {
  try {
    return window.sessionStorage.getItem(KIND_STORAGE) === 'session' ? 'session' : 'key';
  } catch {
    return 'key';
  }
}

/**
 * Sign-out: the tab forgets its credential. An OIDC session token cannot be revoked through the API
 * (it is a stateless JWT, docs/security-oidc.md §5); it stops working when it expires (900 s by
 * default), or at once when an administrator disables or removes the user (docs/security.md §3).
 */
export function forgetKey(): void {
  window.sessionStorage.removeItem(KEY_STORAGE);
  window.sessionStorage.removeItem(KIND_STORAGE);
}

/** Checks the credential against the agent and keeps it for this tab when it is accepted. */
export async function signIn(apiKey: string, kind: CredentialKind = 'key'): Promise<Session> {
  const client = new SvcClient({ baseUrl: baseUrl(), apiKey });
  const me = (await client.getRbacMe()) as { key_id?: string | null; role?: string; permissions?: string[]; user_id?: string | null };
  window.sessionStorage.setItem(KEY_STORAGE, apiKey);
  window.sessionStorage.setItem(KIND_STORAGE, kind);
  return { client, keyId: me.key_id ?? null, role: me.role ?? 'viewer', permissions: me.permissions ?? [], kind, userId: me.user_id ?? null };
}

/**
 * What served this page: an agent, or a relay (docs/panel.md § Served by a relay). A relay serves the same build
 * with `<meta name="svc-served-by" content="relay">` added to the page; the agent's own page has
 * none (`relay-agent` when the relay forwards it). Read from the page itself: no request needed.
 */
export function servedBy(): 'agent' | 'relay' {
  return pageMark() === 'relay' ? 'relay' : 'agent';
}

/**
 * True for an agent's page forwarded by a relay (`/agents/<id>/`, marked `relay-agent` by the relay):
 * the credential is then a relay key (the relay resolves it and the agent sees its on-behalf-of
 * principal), and OIDC sign-in is not offered (the relay would not know the agent's session token).
 */
export function throughRelay(): boolean {
  return pageMark() === 'relay-agent';
}

function pageMark(): string | null {
  return document.querySelector('meta[name="svc-served-by"]')?.getAttribute('content') ?? null;
}

/**
 * Sign-in at a relay: the relay has no `/v1/rbac/me`; its key is checked with `GET /v1/fleet/agents`
 * (any relay key may read its tenant's fleet), and each agent decides what the key may do there.
 */
export async function signInRelay(apiKey: string): Promise<Session> {
  const client = new SvcClient({ baseUrl: baseUrl(), apiKey });
  const fleet = (await client.request('GET', '/v1/fleet/agents')) as { tenant_id?: string };
  window.sessionStorage.setItem(KEY_STORAGE, apiKey);
  window.sessionStorage.setItem(KIND_STORAGE, 'key');
  return { client, keyId: null, role: 'relay', permissions: [], kind: 'key', relayTenant: fleet.tenant_id ?? '' };
}

/** Who may see the admin view: administrators only (the agent's `admin` access kind, docs/security.md §5). */
export function isAdministrator(session: Session): boolean {
  return session.role === 'administrator';
}

/** True when the signed-in principal may perform an action (`Operate`, `Recover`, …). */
export function can(session: Session, action: string): boolean {
  return session.permissions.includes(action);
}

/** A message a person can read, for any failure of a call. */
export function describeError(err: unknown): string {
  if (err instanceof PermissionError) return `Not allowed (${err.status}): ${err.message}`;
  if (err instanceof SvcError) return `${err.message} (${err.code || err.status})`;
  return err instanceof Error ? err.message : String(err);
}

export { SvcClient };
