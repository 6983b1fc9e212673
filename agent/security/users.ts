import path from 'node:path';
import { badRequest, conflict, notFound } from '../core/errors.js';
import { JsonStore } from '../state/json-store.js';
import { assignableRole } from './api-keys.js';
import { parseRole, type Role } from './rbac.js';

export interface DirectoryUser {
  user_id: string;
  display_name: string;
  email: string | null;
  role: Role;
  api_key_id: string | null;
  enabled: boolean;
  created_at_ms: number;
  updated_at_ms: number;
  /** Where the entry came from: the admin API, the project configuration, or an identity provider import. */
  source: 'admin' | 'config' | 'oidc';
}

/** An entry as an identity provider or a directory file describes it (docs/security-oidc.md §3 step 4). */
export interface DirectoryEntry {
  user_id: string;
  display_name: string;
  email: string | null;
  groups: string[];
  role: string | null;
}

export const USERS_FILE = 'admin-users.json';

/** The role an imported entry gets: first group present in the map, else its own role, else operator. */
export function entryRole(e: DirectoryEntry, groupRoleMap: Record<string, string>): Role {
  const group = e.groups.find((g) => Object.prototype.hasOwnProperty.call(groupRoleMap, g));
  return parseRole(group !== undefined ? groupRoleMap[group] : (e.role ?? 'operator'));
}

/**
 * The operator directory (`admin-users.json`): who may sign in and with which role. Seeded from the
 * project's `[[humans]]` the first time it is empty; afterwards the file is the truth.
 */
export class UserDirectory {
  private constructor(private readonly store: JsonStore<DirectoryUser[]>) {}

  static async open(stateDir: string, seed: Array<{ id: string; name: string | null; role: string | null; email: string | null }>): Promise<UserDirectory> {
    const store = await JsonStore.open<DirectoryUser[]>(path.join(stateDir, USERS_FILE), {
      defaults: () => [],
      revive: (raw) => {
        if (!Array.isArray(raw)) throw new Error('expected an array of users');
        return raw as DirectoryUser[];
      },
    });
    const dir = new UserDirectory(store);
    if (store.data.length === 0 && seed.length > 0) {
      const now = Date.now();
      store.change((d) => {
        for (const h of seed) {
          const role = parseRole(h.role);
          d.push({
            user_id: h.id,
            display_name: h.name ?? h.id,
            email: h.email,
            // A configured person whose role is not an RBAC role gets the least privilege.
            role,
            api_key_id: null,
            enabled: role !== 'guest',
            created_at_ms: now,
            updated_at_ms: now,
            source: 'config',
          });
        }
      });
    }
    return dir;
  }

  get file(): string {
    return this.store.file;
  }

  list(): DirectoryUser[] {
    return this.store.data.slice().sort((a, b) => a.user_id.localeCompare(b.user_id));
  }

  get(userId: string): DirectoryUser | undefined {
    return this.store.data.find((u) => u.user_id === userId);
  }

  create(input: { user_id: string; display_name: string; email?: string | null | undefined; role: unknown; api_key_id?: string | null | undefined; enabled?: boolean | undefined }): DirectoryUser {
    const role = assignableRole(input.role);
    if (!input.user_id.trim()) throw badRequest('missing user_id');
    if (this.get(input.user_id)) throw conflict('user_id already exists');
    const now = Date.now();
    const user: DirectoryUser = {
      user_id: input.user_id,
      display_name: input.display_name,
      email: input.email ?? null,
      role,
      api_key_id: input.api_key_id ?? null,
      enabled: input.enabled ?? true,
      created_at_ms: now,
      updated_at_ms: now,
      source: 'admin',
    };
    this.store.change((d) => d.push(user));
    return user;
  }

  update(userId: string, patch: { display_name?: string | undefined; email?: string | null | undefined; role?: unknown; enabled?: boolean | undefined; api_key_id?: string | null | undefined }): DirectoryUser {
    const u = this.get(userId);
    if (!u) throw notFound(`user '${userId}' not found`);
    const role = patch.role === undefined ? u.role : assignableRole(patch.role);
    this.store.change(() => {
      u.role = role;
      if (patch.display_name !== undefined) u.display_name = patch.display_name;
      if (patch.email !== undefined) u.email = patch.email;
      if (patch.enabled !== undefined) u.enabled = patch.enabled;
      if (patch.api_key_id !== undefined) u.api_key_id = patch.api_key_id;
      u.updated_at_ms = Date.now();
    });
    return u;
  }

  remove(userId: string): void {
    const i = this.store.data.findIndex((u) => u.user_id === userId);
    if (i < 0) throw notFound(`user '${userId}' not found`);
    this.store.change((d) => d.splice(i, 1));
  }

  /**
   * Directory import (OIDC sign-in or sync): role = first group present in `groupRoleMap`, else the
   * entry's own role, else operator. Entries that map to guest are skipped. Returns counts and the
   * imported users.
   */
  importEntries(entries: DirectoryEntry[], groupRoleMap: Record<string, string>): { created: number; updated: number; skipped: number; users: DirectoryUser[] } {
    let created = 0;
    let updated = 0;
    let skipped = 0;
    const users: DirectoryUser[] = [];
    const now = Date.now();
    this.store.change((d) => {
      for (const e of entries) {
        const role = entryRole(e, groupRoleMap);
        if (role === 'guest' || !e.user_id) {
          skipped++;
          continue;
        }
        const existing = d.find((u) => u.user_id === e.user_id);
        if (existing) {
          existing.display_name = e.display_name;
          existing.email = e.email;
          existing.role = role;
          existing.updated_at_ms = now;
          updated++;
          users.push(existing);
        } else {
          const u: DirectoryUser = {
            user_id: e.user_id,
            display_name: e.display_name,
            email: e.email,
            role,
            api_key_id: null,
            enabled: true,
            created_at_ms: now,
            updated_at_ms: now,
            source: 'oidc',
          };
          d.push(u);
          created++;
          users.push(u);
        }
      }
    });
    return { created, updated, skipped, users };
  }

  flush(): Promise<void> {
    return this.store.flush();
  }
}
