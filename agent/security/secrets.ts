import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Settings } from '../settings/settings.js';
import { fsyncDir, writeNewFileSync } from '../state/durable-file.js';

/**
 * The agent's three secrets: the API-key pepper, the session signing secret and the audit chain's
 * signing key. Each is the configured value when one is set, else a 256-bit random value generated
 * on the first start and kept in `<state dir>/secrets.json` (owner-only) for every later start.
 *
 * This is a deliberate difference from the specification's fallback (pepper = the state directory's
 * path or `.svc-control-center`, session secret = pepper), which anyone can guess: see
 * docs/security.md §2 "Where the secrets come from". The three are separate keys so that one leaking
 * (or being rotated) does not give away or change the others.
 */
export const SECRETS_FILE = 'secrets.json';

const FIELDS = ['api_key_pepper', 'session_jwt_secret', 'audit_signing_key'] as const;
type Field = (typeof FIELDS)[number];
type StoredSecrets = Record<Field, string>;

export interface ResolvedSecrets {
  pepper: string;
  sessionSecret: string;
  auditSigningKey: string;
  /** Which values came from the environment (the rest come from the secrets file). */
  explicit: { pepper: boolean; sessionSecret: boolean; auditSigningKey: boolean };
  /** The secrets file, or null when every value is configured and no file is needed. */
  file: string | null;
}

export class SecretsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretsError';
  }
}

const HEX64 = /^[0-9a-f]{64}$/;

function randomSecret(): string {
  return crypto.randomBytes(32).toString('hex');
}

/** Reads the secrets file: null when it does not exist; a file that exists but is unusable stops the start. */
function readSecretsFile(file: string): Partial<StoredSecrets> | null {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new SecretsError(`${file} cannot be read: ${(err as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    // Regenerating here would silently invalidate every key, session and the audit signer: refuse.
    throw new SecretsError(`${file} is not valid JSON (${(err as Error).message}); restore it from a backup or remove it to generate new secrets`);
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new SecretsError(`${file} must hold a JSON object`);
  const out: Partial<StoredSecrets> = {};
  for (const f of FIELDS) {
    const v = (raw as Record<string, unknown>)[f];
    if (v === undefined) continue;
    if (typeof v !== 'string' || !HEX64.test(v)) throw new SecretsError(`${file}: ${f} must be 64 lowercase hex characters`);
    out[f] = v;
  }
  return out;
}

/** Writes owner-only and atomically: temp file (0600) + fsync, then link/rename, then fsync the directory. */
function writeSecretsFile(file: string, secrets: StoredSecrets, exclusive: boolean): boolean {
  const dir = path.dirname(file);
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${crypto.randomBytes(6).toString('hex')}.tmp`);
  const body = JSON.stringify({ version: 1, ...secrets, created_at: new Date().toISOString() }, null, 2) + '\n';
  writeNewFileSync(tmp, body);
  let written = true;
  try {
    if (exclusive) {
      // link() fails if the file appeared meanwhile (another agent starting on the same state
      // directory): the first writer wins and everyone uses its secrets.
      try {
        fs.linkSync(tmp, file);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        written = false;
      }
    } else {
      fs.renameSync(tmp, file);
    }
  } finally {
    fs.rmSync(tmp, { force: true });
  }
  fsyncDir(dir);
  return written;
}

/**
 * Resolves the three secrets for an agent whose state directory exists. Called once, from
 * `Agent.create`, before anything that hashes, signs or verifies.
 */
export function resolveSecrets(settings: Pick<Settings, 'stateDir' | 'pepper' | 'session' | 'auditSigningKey'>, log: (line: string) => void): ResolvedSecrets {
  const explicit = {
    pepper: settings.pepper !== null,
    sessionSecret: settings.session.secret !== null,
    auditSigningKey: settings.auditSigningKey !== null,
  };
  const needFile = !(explicit.pepper && explicit.sessionSecret && explicit.auditSigningKey);
  const file = path.join(settings.stateDir, SECRETS_FILE);
  let stored: Partial<StoredSecrets> = {};
  if (needFile) {
    let existing = readSecretsFile(file);
    if (existing === null) {
      const fresh: StoredSecrets = { api_key_pepper: randomSecret(), session_jwt_secret: randomSecret(), audit_signing_key: randomSecret() };
      if (writeSecretsFile(file, fresh, true)) {
        log(`generated new secrets in ${SECRETS_FILE} in the state directory (see docs/security.md §2)`);
        existing = fresh;
      } else {
        existing = readSecretsFile(file) ?? {};
      }
    }
    const missing = FIELDS.filter((f) => existing![f] === undefined);
    if (missing.length > 0) {
      // An older or hand-edited file: add only what is missing, never replace what is there.
      const completed = { ...existing } as StoredSecrets;
      for (const f of missing) completed[f] = randomSecret();
      writeSecretsFile(file, completed, false);
      existing = completed;
    }
    stored = existing;
    checkPermissions(file, log);
  }
  return {
    pepper: settings.pepper ?? stored.api_key_pepper!,
    sessionSecret: settings.session.secret ?? stored.session_jwt_secret!,
    auditSigningKey: settings.auditSigningKey ?? stored.audit_signing_key!,
    explicit,
    file: needFile ? file : null,
  };
}

/** Anyone but the owner able to read the file can mint sessions and forge key hashes: say so. */
function checkPermissions(file: string, log: (line: string) => void): void {
  if (process.platform === 'win32') return;
  try {
    const mode = fs.statSync(file).mode & 0o777;
    if ((mode & 0o077) !== 0) {
      log(`warning: ${SECRETS_FILE} in the state directory is readable by others (mode ${mode.toString(8)}); run chmod 600 on it`);
    }
  } catch {
    /* vanished meanwhile: the next start says more */
  }
}
