import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ApiError, badRequest } from '../core/errors.js';
import { writeFileDurablySync } from '../state/durable-file.js';
import type { SnapshotMeta, SnapshotResolved, StoredSnapshot } from './snapshot-model.js';

/**
 * The snapshot directory (docs/operations.md § Configuration snapshots and approvals): one file per
 * snapshot, `<id>.json` holding `{meta, resolved}` or `<id>.snap.enc` holding an envelope whose
 * ciphertext is that same document encrypted with AES-256-GCM. An encrypted snapshot is never
 * written in plain text, not even to a temporary file: the bytes that reach the disk are the
 * envelope. Snapshots are immutable; the API never deletes one.
 */

export const ENVELOPE_FORMAT = 'svc-config-snapshot-v1';
export const ENVELOPE_CIPHER = 'AES-256-GCM';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/** An id that is also a safe file name: the reference's `cfg-<digits>` style, nothing else. */
const SNAPSHOT_ID = /^cfg-[0-9]{1,40}$/;

export const encryptionError = (detail: string) => badRequest(`config snapshot encryption error: ${detail}`);
/** An unknown or unreadable snapshot named inside an action: 400 with code `not_found` (docs/api.md § Errors). */
export const snapshotNotFound = (message: string) => new ApiError(400, 'not_found', message);

function keyOf(material: string): Buffer {
  return createHash('sha256').update(material, 'utf8').digest();
}

export function encryptSnapshot(doc: StoredSnapshot, keyMaterial: string): string {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', keyOf(keyMaterial), nonce);
  const ct = Buffer.concat([cipher.update(JSON.stringify(doc, jsonSafe), 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return JSON.stringify({ format: ENVELOPE_FORMAT, cipher: ENVELOPE_CIPHER, ciphertext: Buffer.concat([nonce, ct]).toString('hex') }, null, 2);
}

export function decryptSnapshot(text: string, keyMaterial: string | null): StoredSnapshot {
  let envelope: { format?: unknown; cipher?: unknown; ciphertext?: unknown };
  try {
    envelope = JSON.parse(text) as typeof envelope;
  } catch (err) {
    throw encryptionError(`envelope is not JSON: ${(err as Error).message}`);
  }
  if (envelope.format !== ENVELOPE_FORMAT) throw encryptionError(`unsupported snapshot envelope format '${String(envelope.format)}'`);
  if (!keyMaterial) throw encryptionError('SVC_CONFIG_SNAPSHOT_KEY is required to read an encrypted snapshot');
  const bytes = typeof envelope.ciphertext === 'string' && /^[0-9a-f]*$/i.test(envelope.ciphertext) ? Buffer.from(envelope.ciphertext, 'hex') : Buffer.alloc(0);
  if (bytes.length < NONCE_BYTES + TAG_BYTES) throw encryptionError('ciphertext too short');
  const nonce = bytes.subarray(0, NONCE_BYTES);
  const tag = bytes.subarray(bytes.length - TAG_BYTES);
  const body = bytes.subarray(NONCE_BYTES, bytes.length - TAG_BYTES);
  try {
    const decipher = createDecipheriv('aes-256-gcm', keyOf(keyMaterial), nonce);
    decipher.setAuthTag(tag);
    const plain = Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
    return JSON.parse(plain) as StoredSnapshot;
  } catch {
    throw encryptionError('decryption failed (wrong SVC_CONFIG_SNAPSHOT_KEY or a damaged file)');
  }
}

/** TOML integers may be bigints and dates objects; a snapshot is plain JSON. */
function jsonSafe(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? (Number.isSafeInteger(Number(value)) ? Number(value) : value.toString()) : value;
}

function isSnapshot(v: unknown): v is StoredSnapshot {
  const meta = (v as StoredSnapshot | null)?.meta;
  return !!v && typeof v === 'object' && !!meta && typeof meta.id === 'string' && typeof meta.created_at_ms === 'number' && typeof (v as StoredSnapshot).resolved === 'object';
}

export class SnapshotStore {
  private lastMs = 0;

  constructor(
    readonly dir: string,
    private readonly keyMaterial: () => string | null,
  ) {}

  /** `cfg-<epoch ms><3 digits>`: unique within this process even for several snapshots in one millisecond. */
  private nextId(now: number): string {
    let micros = now * 1000;
    if (micros <= this.lastMs) micros = this.lastMs + 1;
    this.lastMs = micros;
    let id = `cfg-${micros}`;
    // Another process (or an earlier run with a skewed clock) may have taken it: step on.
    while (fs.existsSync(path.join(this.dir, `${id}.json`)) || fs.existsSync(path.join(this.dir, `${id}.snap.enc`))) {
      micros = ++this.lastMs;
      id = `cfg-${micros}`;
    }
    return id;
  }

  save(resolved: SnapshotResolved, options: { label?: string | undefined; encrypt: boolean; now?: number }): SnapshotMeta {
    const key = this.keyMaterial();
    if (options.encrypt && !key) throw encryptionError('SVC_CONFIG_SNAPSHOT_KEY is required when encryption is enabled');
    const now = options.now ?? Date.now();
    try {
      fs.mkdirSync(this.dir, { recursive: true });
    } catch (err) {
      throw badRequest(`failed to create ${this.dir}: ${(err as Error).message}`);
    }
    const id = this.nextId(now);
    const meta: SnapshotMeta = {
      id,
      created_at_ms: now,
      ...(options.label !== undefined ? { label: options.label } : {}),
      project_name: resolved.config.projectName ?? '',
      device_count: resolved.device_pool.length,
      encrypted: options.encrypt,
    };
    const doc: StoredSnapshot = { meta, resolved };
    const file = path.join(this.dir, options.encrypt ? `${id}.snap.enc` : `${id}.json`);
    try {
      writeFileDurablySync(file, options.encrypt ? encryptSnapshot(doc, key!) : JSON.stringify(doc, jsonSafe, 2), 0o600);
    } catch (err) {
      throw badRequest(`failed to write ${file}: ${(err as Error).message}`);
    }
    return meta;
  }

  /** Loads a snapshot: the plain file first, then the encrypted one. Unknown → 400 `not_found`. */
  load(id: string): StoredSnapshot {
    if (!SNAPSHOT_ID.test(id)) throw snapshotNotFound(`failed to read snapshot '${id}': no such snapshot`);
    const plain = path.join(this.dir, `${id}.json`);
    const enc = path.join(this.dir, `${id}.snap.enc`);
    let text: string;
    try {
      text = fs.readFileSync(plain, 'utf8');
    } catch {
      try {
        text = fs.readFileSync(enc, 'utf8');
      } catch (err) {
        throw snapshotNotFound(`failed to read ${path.basename(enc)}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such snapshot' : (err as Error).message}`);
      }
      const doc = decryptSnapshot(text, this.keyMaterial());
      if (!isSnapshot(doc)) throw snapshotNotFound(`snapshot '${id}' is not a snapshot document`);
      return doc;
    }
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch (err) {
      throw snapshotNotFound(`failed to parse ${path.basename(plain)}: ${(err as Error).message}`);
    }
    if (!isSnapshot(doc)) throw snapshotNotFound(`snapshot '${id}' is not a snapshot document`);
    return doc;
  }

  /**
   * Every snapshot that loads, newest first: encrypted ones are skipped when they cannot be decrypted
   * (no key, wrong key), unparseable files are skipped, a missing or unreadable directory is empty.
   */
  list(): StoredSnapshot[] {
    let names: string[];
    try {
      names = fs.readdirSync(this.dir);
    } catch {
      return [];
    }
    const out: StoredSnapshot[] = [];
    for (const name of names) {
      const m = /^(cfg-[0-9]+)\.(json|snap\.enc)$/.exec(name);
      if (!m) continue;
      try {
        const text = fs.readFileSync(path.join(this.dir, name), 'utf8');
        const doc = m[2] === 'json' ? (JSON.parse(text) as unknown) : decryptSnapshot(text, this.keyMaterial());
        if (isSnapshot(doc)) out.push(doc);
      } catch {
        /* skipped: see above */
      }
    }
    return out.sort((a, b) => b.meta.created_at_ms - a.meta.created_at_ms || b.meta.id.localeCompare(a.meta.id));
  }
}
