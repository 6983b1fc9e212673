import fs from 'node:fs';
import * as z from 'zod';
import { badRequest } from '../../core/errors.js';
import { directoryEntrySchema } from '../../../api/domains/oidc.js';
import type { DirectoryEntry } from '../users.js';

// The schema of one entry is part of the contract (the sync body carries a list of them); the
// directory file uses the same one.
export { directoryEntrySchema, type RawDirectoryEntry } from '../../../api/domains/oidc.js';

const nonEmpty = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v : undefined);

/** Maps a userinfo response or a directory record to the entry the user directory imports. */
export function toDirectoryEntry(raw: Record<string, unknown>): DirectoryEntry {
  const userId = nonEmpty(raw['sub']) ?? nonEmpty(raw['user_id']) ?? '';
  const groupsRaw = raw['groups'];
  const groups = Array.isArray(groupsRaw)
    ? groupsRaw.filter((g): g is string => typeof g === 'string')
    : typeof groupsRaw === 'string' && groupsRaw !== ''
      ? [groupsRaw]
      : [];
  return {
    user_id: userId,
    display_name: nonEmpty(raw['name']) ?? nonEmpty(raw['preferred_username']) ?? nonEmpty(raw['display_name']) ?? userId,
    email: nonEmpty(raw['email']) ?? null,
    groups,
    role: nonEmpty(raw['role']) ?? null,
  };
}

const directoryFileSchema = z.lazy(() => z.union([
  z.array(directoryEntrySchema),
  z.object({ directory: z.array(directoryEntrySchema) }),
  z.object({ users: z.array(directoryEntrySchema) }),
]));

/**
 * Reads the directory file named by `SVC_OIDC_DIRECTORY_JSON`: a JSON array of entries, or an object
 * with a `directory` (or `users`) array.
 */
export function readDirectoryFile(file: string): DirectoryEntry[] {
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw badRequest(`could not read directory file ${file}: ${(err as Error).message}`);
  }
  const parsed = directoryFileSchema.safeParse(raw);
  if (!parsed.success) throw badRequest(`directory file ${file} is not a list of directory entries`);
  const list = Array.isArray(parsed.data) ? parsed.data : 'directory' in parsed.data ? parsed.data.directory : parsed.data.users;
  return list.map((e) => toDirectoryEntry(e));
}
