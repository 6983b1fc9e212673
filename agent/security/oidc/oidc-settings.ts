import path from 'node:path';
import { badRequest } from '../../core/errors.js';
import { JsonStore } from '../../state/json-store.js';
import { constantTimeEqual } from '../constant-time.js';
import { parseRole, type Role } from '../rbac.js';
import { validateIssuer, validateRedirectUri } from './urls.js';

export const OIDC_SETTINGS_FILE = 'admin-oidc.json';

/** How long an authorization started by authorize-url may be completed (docs/wire-decisions.md D7). */
export const PENDING_TTL_MS = 10 * 60 * 1000;
/**
 * Authorizations kept at once. The reference keeps one, so any anonymous authorize-url call broke the
 * sign-in of whoever was at the provider; we keep several, keyed by state, the oldest evicted past
 * this bound (docs/security-oidc.md §3, "Several sign-ins at once").
 */
export const MAX_PENDING = 256;

/** The authorization in flight (docs/wire-decisions.md D7): kept server-side only, never returned by any read. */
export interface PendingAuthorization {
  state: string;
  verifier: string;
  redirect_uri: string;
  created_at_ms: number;
}

/** `<state dir>/admin-oidc.json`. Empty strings mean "not configured". */
export interface OidcDocument {
  enabled: boolean;
  issuer: string;
  client_id: string;
  /** Needed in clear to authenticate at the token endpoint; write-only through the API. */
  client_secret: string;
  group_role_map: Record<string, Role>;
  redirect_uri: string;
  /** RFC 3339 time of the last directory import (sign-in or sync); null before the first. */
  last_sync_at: string | null;
  /** Authorizations in flight, oldest first; each single use and expiring after PENDING_TTL_MS. */
  pending: PendingAuthorization[];
}

/** What PUT /v1/admin/oidc may change; absent fields keep their value, an empty secret keeps the old one. */
export interface OidcSettingsInput {
  enabled?: boolean | undefined;
  issuer?: string | undefined;
  client_id?: string | undefined;
  client_secret?: string | undefined;
  group_role_map?: Record<string, string> | undefined;
  redirect_uri?: string | undefined;
}

function defaults(): OidcDocument {
  return {
    enabled: false,
    issuer: '',
    client_id: '',
    client_secret: '',
    group_role_map: {},
    redirect_uri: '',
    last_sync_at: null,
    pending: [],
  };
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Normalises what was read from disk; anything unusable falls back field by field. */
function revive(raw: unknown): OidcDocument {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new Error('expected a JSON object');
  const r = raw as Record<string, unknown>;
  const map: Record<string, Role> = {};
  const rawMap = r['group_role_map'];
  if (rawMap && typeof rawMap === 'object' && !Array.isArray(rawMap)) {
    for (const [group, role] of Object.entries(rawMap)) map[group] = parseRole(role);
  }
  // A file of the single-pending layout holds an object (or null); ours holds an array.
  const rawPending = Array.isArray(r['pending']) ? r['pending'] : r['pending'] ? [r['pending']] : [];
  const pending: PendingAuthorization[] = [];
  for (const item of rawPending as unknown[]) {
    const p = item as Record<string, unknown> | null;
    if (p && typeof p === 'object' && typeof p['state'] === 'string' && typeof p['verifier'] === 'string' && typeof p['redirect_uri'] === 'string') {
      pending.push({ state: p['state'], verifier: p['verifier'], redirect_uri: p['redirect_uri'], created_at_ms: Number(p['created_at_ms']) || 0 });
    }
  }
  return {
    enabled: r['enabled'] === true,
    issuer: str(r['issuer']),
    client_id: str(r['client_id']),
    client_secret: str(r['client_secret']),
    group_role_map: map,
    redirect_uri: str(r['redirect_uri']),
    last_sync_at: typeof r['last_sync_at'] === 'string' ? r['last_sync_at'] : null,
    pending,
  };
}

/** A group→role map value: any role name or alias; `guest` is allowed (it denies sign-in). */
function mappedRole(group: string, value: string): Role {
  const role = parseRole(value);
  if (role === 'guest' && value.trim().toLowerCase() !== 'guest') {
    throw badRequest(`invalid role '${value}' for group '${group}'`);
  }
  return role;
}

/**
 * The OIDC settings document. All reads are from memory; every change is written atomically by the
 * JsonStore (docs/wire-decisions.md D10). The pending authorization lives here too, so an agent restart between
 * authorize-url and callback does not lose it (it still expires after 10 minutes).
 */
export class OidcSettingsStore {
  private constructor(private readonly store: JsonStore<OidcDocument>) {}

  static async open(stateDir: string, onWarning?: (message: string) => void): Promise<OidcSettingsStore> {
    const store = await JsonStore.open<OidcDocument>(path.join(stateDir, OIDC_SETTINGS_FILE), {
      defaults,
      revive,
      ...(onWarning ? { onWarning } : {}),
    });
    return new OidcSettingsStore(store);
  }

  get file(): string {
    return this.store.file;
  }

  /** Read-only view of the document (callers must not mutate it). */
  get current(): Readonly<OidcDocument> {
    return this.store.data;
  }

  /** Validates everything first, then applies the change in one write. */
  update(input: OidcSettingsInput): void {
    const next: Partial<OidcDocument> = {};
    if (input.enabled !== undefined) next.enabled = input.enabled;
    if (input.issuer !== undefined) next.issuer = input.issuer.trim() === '' ? '' : validateIssuer(input.issuer);
    if (input.client_id !== undefined) next.client_id = input.client_id.trim();
    // Write-only secret: an empty (or absent) value keeps the stored one.
    if (input.client_secret !== undefined && input.client_secret !== '') next.client_secret = input.client_secret;
    if (input.redirect_uri !== undefined) {
      next.redirect_uri = input.redirect_uri.trim() === '' ? '' : validateRedirectUri(input.redirect_uri);
    }
    if (input.group_role_map !== undefined) {
      const map: Record<string, Role> = {};
      for (const [group, role] of Object.entries(input.group_role_map)) map[group] = mappedRole(group, role);
      next.group_role_map = map;
    }
    this.store.change((d) => {
      Object.assign(d, next);
      // A different provider or client invalidates an authorization started against the old one.
      if (next.issuer !== undefined || next.client_id !== undefined || next.client_secret !== undefined) d.pending = [];
    });
  }

  /** Adds a pending authorization: expired ones are dropped, and the oldest past MAX_PENDING evicted. */
  addPending(pending: PendingAuthorization, now = Date.now()): void {
    this.store.change((d) => {
      d.pending = d.pending.filter((p) => now - p.created_at_ms <= PENDING_TTL_MS);
      d.pending.push(pending);
      if (d.pending.length > MAX_PENDING) d.pending.splice(0, d.pending.length - MAX_PENDING);
    });
  }

  /**
   * Removes and returns the pending authorization of `state` (single use), or null. Every entry is
   * compared in constant time; an expired one is removed and not returned.
   */
  takePending(state: string, now = Date.now()): PendingAuthorization | null {
    let found: PendingAuthorization | null = null;
    for (const p of this.store.data.pending) if (constantTimeEqual(p.state, state) && !found) found = p;
    if (!found) return null;
    const hit = found;
    this.store.change((d) => {
      d.pending = d.pending.filter((p) => p !== hit);
    });
    return now - hit.created_at_ms > PENDING_TTL_MS ? null : hit;
  }

  markSynced(at: Date = new Date()): string {
    const stamp = at.toISOString();
    this.store.change((d) => {
      d.last_sync_at = stamp;
    });
    return stamp;
  }

  flush(): Promise<void> {
    return this.store.flush();
  }
}
