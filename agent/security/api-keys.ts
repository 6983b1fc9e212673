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

/** Reads a keys file; legacy records holding a plaintext `token` are hashed in memory (spec rule 3). */
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
    }
    if (!hash) return; // nothing to match against: skipped
    records.push({
      key_id: keyId,
      token_hash: hash,
      role: parseRole(e['role']),
      label: typeof e['label'] === 'string' ? e['label'] : '',
      tenant_id: typeof e['tenant_id'] === 'string' && e['tenant_id'] ? e['tenant_id'] : tenant,
    });
  });
  return { records, migrated, problem: null };
}

/**
 * API keys: the in-memory environment key plus the keys file (D11: the same file is read at start and
 * written by the admin API). Only HMAC hashes are kept in memory and on disk; lookups hash the
 * presented token once and compare in constant time.
 */
export class ApiKeyStore {
  private constructor(
    private readonly envKey: string | null,
    private readonly tenant: string,
    private readonly pepper: string,
    private readonly store: JsonStore<ApiKeyRecord[]>,
  ) {}

  static async open(options: {
    file: string;
    pepper: string;
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
    const keys = new ApiKeyStore(options.envKey, options.tenantId, options.pepper, store);
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

  authenticate(token: string): Principal | null {
    if (this.envKey && constantTimeEqual(token, this.envKey)) {
      return { key_id: ENV_KEY_ID, role: 'administrator', tenant_id: this.tenant, auth_kind: 'api_key', user_id: null };
    }
    if (this.store.data.length === 0) return null;
    const presented = hashToken(this.pepper, token);
    // Check every record so the time taken does not depend on which (if any) matches.
    let found: ApiKeyRecord | null = null;
    for (const r of this.store.data) if (hashMatches(r.token_hash, presented) && !found) found = r;
    return found ? { key_id: found.key_id, role: found.role, tenant_id: found.tenant_id, auth_kind: 'api_key', user_id: null } : null;
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
