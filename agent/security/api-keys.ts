import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { badRequest, notFound } from '../core/errors.js';
import { JsonStore } from '../state/json-store.js';
import { constantTimeEqual } from './constant-time.js';
import type { Principal } from './principal.js';
import { parseRole, type Role } from './rbac.js';
import { generateToken, hashMatches, hashToken } from './token-hash.js';

/** One persisted key: never the token itself. */
export interface ApiKeyRecord {
  key_id: string;
  token_hash: string;
  role: Role;
  label: string;
  tenant_id: string;
  /**
   * Fingerprint of the pepper `token_hash` was made with (never the pepper). A record without one
   * predates generated secrets: when no pepper is configured it was hashed with the specification's
   * guessable fallback and is verified against that, once, then re-hashed (docs/security.md §2).
   */
  pepper_id?: string;
}

/** Names a pepper without revealing it. */
export function pepperId(pepper: string): string {
  return crypto.createHash('sha256').update(`svc api-key pepper id\n${pepper}`, 'utf8').digest('hex').slice(0, 16);
}

export interface ApiKeyListing {
  key_id: string;
  role: Role;
  label: string;
  tenant_id: string;
  source: 'env' | 'file';
}

export const ENV_KEY_ID = 'env-default';
export const CREATABLE_ROLES_MESSAGE = 'role must be administrator, supervisor, developer, operator, safety_officer, or auditor';

/** Parses a role for a key or user: strict (unknown and guest refused), unlike the lenient claim parser. */
export function assignableRole(value: unknown): Role {
  const role = parseRole(value);
  if (role === 'guest' || typeof value !== 'string') throw badRequest(CREATABLE_ROLES_MESSAGE);
  return role;
}

interface LoadedFile {
  records: ApiKeyRecord[];
  migrated: number;
  problem: string | null;
}

/** Reads a keys file; legacy records holding a plaintext `token` are hashed in memory (docs/security.md §2). */
function readKeysFile(file: string, pepper: string, tenant: string): LoadedFile {
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { records: [], migrated: 0, problem: null };
    return { records: [], migrated: 0, problem: `keys file ${file} is unreadable (${(err as Error).message}); no keys loaded from it` };
  }
  if (!Array.isArray(raw)) return { records: [], migrated: 0, problem: `keys file ${file} is not a JSON array; no keys loaded from it` };
  const records: ApiKeyRecord[] = [];
  let migrated = 0;
  raw.forEach((entry, i) => {
    const e = (entry ?? {}) as Record<string, unknown>;
    const keyId = typeof e['key_id'] === 'string' && e['key_id'] ? e['key_id'] : `file-key-${i}`;
    let hash = typeof e['token_hash'] === 'string' && /^[0-9a-f]{64}$/i.test(e['token_hash']) ? e['token_hash'].toLowerCase() : null;
    if (!hash && typeof e['token'] === 'string' && e['token'].length > 0) {
      hash = hashToken(pepper, e['token']);
      migrated++;
      e['pepper_id'] = pepperId(pepper);
    }
    if (!hash) return; // nothing to match against: skipped
    records.push({
      key_id: keyId,
      token_hash: hash,
      role: parseRole(e['role']),
      label: typeof e['label'] === 'string' ? e['label'] : '',
      tenant_id: typeof e['tenant_id'] === 'string' && e['tenant_id'] ? e['tenant_id'] : tenant,
      ...(typeof e['pepper_id'] === 'string' && e['pepper_id'] ? { pepper_id: e['pepper_id'] } : {}),
    });
  });
  return { records, migrated, problem: null };
}

/**
 * API keys: the in-memory environment key plus the keys file (docs/wire-decisions.md D11: the same file is read at start and
 * written by the admin API). Only HMAC hashes are kept in memory and on disk; lookups hash the
 * presented token once and compare in constant time.
 */
export class ApiKeyStore {
  private readonly pepperId: string;

  private constructor(
    private readonly envKey: string | null,
    private readonly tenant: string,
    private readonly pepper: string,
    private readonly store: JsonStore<ApiKeyRecord[]>,
    /** The specification's fallback pepper, for unmarked records only; null when a pepper is configured. */
    private readonly legacyPepper: string | null,
    private readonly log: (line: string) => void,
  ) {
    this.pepperId = pepperId(pepper);
  }

  static async open(options: {
    file: string;
    pepper: string;
    /**
     * When the pepper is generated (none configured): the old default pepper that records without a
     * `pepper_id` were hashed with. Null when `SVC_API_KEY_PEPPER` is set: unmarked records were then
     * hashed with that configured pepper, as before.
     */
    legacyPepper?: string | null;
    tenantId: string;
    envKey: string | null;
    log: (line: string) => void;
  }): Promise<ApiKeyStore> {
    const loaded = readKeysFile(options.file, options.pepper, options.tenantId);
    if (loaded.problem) options.log(`warning: ${loaded.problem}`);
    fs.mkdirSync(path.dirname(options.file), { recursive: true });
    const store = await JsonStore.open<ApiKeyRecord[]>(options.file, {
      defaults: () => [],
      // Content comes from readKeysFile (which tolerates and migrates); the store only writes.
      revive: () => loaded.records,
      onWarning: (m) => options.log(`warning: ${m}`),
    });
    if (loaded.problem) store.data.length = 0;
    const keys = new ApiKeyStore(options.envKey, options.tenantId, options.pepper, store, options.legacyPepper ?? null, options.log);
    if (!keys.legacyPepper) {
      // A configured pepper: unmarked records were made with it (the behaviour before pepper ids).
      let marked = 0;
      for (const r of store.data) if (!r.pepper_id) (r.pepper_id = keys.pepperId), marked++;
      if (marked > 0) store.markDirty();
    }
    keys.warnLegacy();
    if (loaded.migrated > 0) {
      // Rewrite at once so the plaintext does not stay on disk until some later change.
      store.markDirty();
      await store.flush();
      options.log(`migrated ${loaded.migrated} plaintext API key(s) in ${options.file} to hashes`);
    }
    return keys;
  }

  get file(): string {
    return this.store.file;
  }

  /** Keys loaded, environment key included. */
  get count(): number {
    return this.store.data.length + (this.envKey ? 1 : 0);
  }

  /** Records still hashed with the specification's guessable fallback pepper. */
  get legacyCount(): number {
    return this.legacyPepper ? this.store.data.filter((r) => !r.pepper_id).length : 0;
  }

  private warnLegacy(): void {
    const n = this.legacyCount;
    if (n > 0) {
      this.log(
        `warning: ${n} API key record(s) in ${path.basename(this.file)} are hashed with the old default pepper; each is re-hashed with the generated pepper on its first successful use (docs/security.md §2)`,
      );
    }
  }

  authenticate(token: string): Principal | null {
    if (this.envKey && constantTimeEqual(token, this.envKey)) {
      return { key_id: ENV_KEY_ID, role: 'administrator', tenant_id: this.tenant, auth_kind: 'api_key', user_id: null };
    }
    if (this.store.data.length === 0) return null;
    const presented = hashToken(this.pepper, token);
    const legacy = this.legacyPepper && this.legacyCount > 0 ? hashToken(this.legacyPepper, token) : null;
    // Check every record so the time taken does not depend on which (if any) matches. A record is
    // compared with the legacy hash only when it is unmarked: a marked record never verifies under
    // the guessable pepper.
    let found: ApiKeyRecord | null = null;
    let foundLegacy = false;
    for (const r of this.store.data) {
      const isLegacy = legacy !== null && !r.pepper_id;
      if (hashMatches(r.token_hash, isLegacy ? legacy : presented) && !found) {
        found = r;
        foundLegacy = isLegacy;
      }
    }
    if (!found) return null;
    if (foundLegacy) {
      const r = found;
      this.store.change(() => {
        r.token_hash = presented;
        r.pepper_id = this.pepperId;
      });
      this.log(`re-hashed API key ${r.key_id} with the generated pepper (${this.legacyCount} legacy record(s) left)`);
    }
    return { key_id: found.key_id, role: found.role, tenant_id: found.tenant_id, auth_kind: 'api_key', user_id: null };
  }

  /** The current role and tenant of a stored key (null once revoked): sessions re-read it (docs/security.md §3). */
  lookup(keyId: string): { role: Role; tenant_id: string } | null {
    if (this.envKey && keyId === ENV_KEY_ID) return { role: 'administrator', tenant_id: this.tenant };
    const r = this.store.data.find((k) => k.key_id === keyId);
    return r ? { role: r.role, tenant_id: r.tenant_id } : null;
  }

  list(): ApiKeyListing[] {
    const out: ApiKeyListing[] = [];
    if (this.envKey) out.push({ key_id: ENV_KEY_ID, role: 'administrator', label: 'SVC_API_KEY', tenant_id: this.tenant, source: 'env' });
    for (const r of this.store.data) out.push({ key_id: r.key_id, role: r.role, label: r.label, tenant_id: r.tenant_id, source: 'file' });
    return out;
  }

  /** Creates a key; the plaintext token is returned here and nowhere else, ever. */
  create(input: { role: unknown; label?: string | undefined; tenant_id?: string | undefined }): { record: ApiKeyRecord; token: string } {
    const role = assignableRole(input.role);
    const token = generateToken();
    let id = `key-${Date.now()}`;
    for (let n = 2; this.store.data.some((r) => r.key_id === id); n++) id = `key-${Date.now()}-${n}`;
    const record: ApiKeyRecord = {
      key_id: id,
      token_hash: hashToken(this.pepper, token),
      role,
      label: input.label ?? '',
      tenant_id: input.tenant_id?.trim() || this.tenant,
      pepper_id: this.pepperId,
    };
    this.store.change((d) => d.push(record));
    return { record, token };
  }

  update(keyId: string, patch: { role?: unknown; label?: string | undefined }): ApiKeyRecord {
    if (keyId === ENV_KEY_ID) throw badRequest('the SVC_API_KEY key cannot be changed through the API');
    const r = this.store.data.find((k) => k.key_id === keyId);
    if (!r) throw notFound(`api key '${keyId}' not found`);
    const role = patch.role === undefined ? r.role : assignableRole(patch.role);
    this.store.change(() => {
      r.role = role;
      if (patch.label !== undefined) r.label = patch.label;
    });
    return r;
  }

  revoke(keyId: string): void {
    if (keyId === ENV_KEY_ID) throw badRequest('the SVC_API_KEY key cannot be revoked through the API');
    const i = this.store.data.findIndex((k) => k.key_id === keyId);
    if (i < 0) throw notFound(`api key '${keyId}' not found`);
    this.store.change((d) => d.splice(i, 1));
  }

  flush(): Promise<void> {
    return this.store.flush();
  }
}
