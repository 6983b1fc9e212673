import { SvcClient, PermissionError, SvcError } from '../../clients/typescript/src/index.js';

/** Where the key lives: this tab only, gone when the tab closes (docs/panel.md § Sign-in). */
const KEY_STORAGE = 'svc.panel.apiKey';

/** Who is signed in, from `GET /v1/rbac/me`. */
export interface Session {
  client: SvcClient;
  keyId: string | null;
  role: string;
  permissions: readonly string[];
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

export function forgetKey(): void {
  window.sessionStorage.removeItem(KEY_STORAGE);
}

/** Checks the key against the agent and keeps it for this tab when it is accepted. */
export async function signIn(apiKey: string): Promise<Session> {
  const client = new SvcClient({ baseUrl: baseUrl(), apiKey });
  const me = (await client.getRbacMe()) as { key_id?: string | null; role?: string; permissions?: string[] };
  window.sessionStorage.setItem(KEY_STORAGE, apiKey);
  return { client, keyId: me.key_id ?? null, role: me.role ?? 'viewer', permissions: me.permissions ?? [] };
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
