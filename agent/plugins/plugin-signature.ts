/**
 * Plugin signatures (docs/plugins.md § Signatures): a plugin directory is summarised by one SHA-256
 * digest over every file's relative path and content hash, and the publisher signs that digest with
 * Ed25519. `svc.plugin.sig` holds `{algorithm, publisher, digest, signature}`; the agent trusts the
 * public keys configured by `SVC_PLUGIN_TRUSTED_KEYS` / `SVC_PLUGIN_TRUSTED_KEYS_FILE`.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export const SIGNATURE_FILE = 'svc.plugin.sig';
/** Domain separation: a plugin signature can never be replayed as a signature of something else. */
const SIGNED_PREFIX = 'svc.plugin.v1:';
const MAX_FILES = 5000;
export const MAX_PLUGIN_BYTES = 64 * 1024 * 1024;

export class PluginFilesError extends Error {}

export interface SignatureFile {
  algorithm: string;
  publisher: string;
  digest: string;
  signature: string;
}

/**
 * `sha256:<hex>` over the sorted lines `<relative path>\0<sha256 of the file>\n` of every regular
 * file below `dir` except the signature file. A symbolic link, a device or more than the limits is an
 * error: what is installed must be exactly what was signed.
 */
export function directoryDigest(dir: string): string {
  const files: { rel: string; hash: string }[] = [];
  let total = 0;
  const walk = (abs: string, rel: string) => {
    for (const entry of fs.readdirSync(abs, { withFileTypes: true })) {
      const childRel = rel === '' ? entry.name : `${rel}/${entry.name}`;
      const childAbs = path.join(abs, entry.name);
      if (entry.isSymbolicLink()) throw new PluginFilesError(`plugin contains a symbolic link: ${childRel}`);
      if (entry.isDirectory()) {
        walk(childAbs, childRel);
        continue;
      }
      if (!entry.isFile()) throw new PluginFilesError(`plugin contains a special file: ${childRel}`);
      if (childRel === SIGNATURE_FILE) continue;
      const data = fs.readFileSync(childAbs);
      total += data.length;
      if (files.length >= MAX_FILES || total > MAX_PLUGIN_BYTES) throw new PluginFilesError('plugin is too large');
      files.push({ rel: childRel, hash: crypto.createHash('sha256').update(data).digest('hex') });
    }
  };
  walk(dir, '');
  files.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
  const h = crypto.createHash('sha256');
  for (const f of files) h.update(`${f.rel}\0${f.hash}\n`);
  return `sha256:${h.digest('hex')}`;
}

/**
 * Refuses a source directory beyond the limits before anything is copied (sizes from `lstat`, no
 * file is read); links and special files are left for the digest of the staged copy to refuse.
 */
export function checkDirectoryLimits(dir: string): void {
  let files = 0;
  let total = 0;
  const walk = (abs: string) => {
    for (const entry of fs.readdirSync(abs, { withFileTypes: true })) {
      const child = path.join(abs, entry.name);
      if (entry.isDirectory()) walk(child);
      else if (entry.isFile()) {
        files += 1;
        total += fs.lstatSync(child).size;
      }
      if (files > MAX_FILES || total > MAX_PLUGIN_BYTES) throw new PluginFilesError('plugin is too large');
    }
  };
  walk(dir);
}

export function readSignatureFile(dir: string): SignatureFile | null {
  const file = path.join(dir, SIGNATURE_FILE);
  if (!fs.existsSync(file)) return null;
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    throw new PluginFilesError(`${SIGNATURE_FILE} is not JSON`);
  }
  const r = raw as Record<string, unknown>;
  for (const k of ['algorithm', 'publisher', 'digest', 'signature']) {
    if (typeof r?.[k] !== 'string') throw new PluginFilesError(`${SIGNATURE_FILE} lacks ${k}`);
  }
  return r as unknown as SignatureFile;
}

/** An Ed25519 public key from base64 of its SPKI DER, of its raw 32 bytes, or from PEM. */
export function publicKeyFrom(text: string): crypto.KeyObject {
  const t = text.trim();
  if (t.startsWith('-----BEGIN')) return crypto.createPublicKey(t);
  const der = Buffer.from(t, 'base64');
  if (der.length === 32) {
    // Raw key: prepend the fixed SPKI header of an Ed25519 key (RFC 8410).
    return crypto.createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), der]), format: 'der', type: 'spki' });
  }
  return crypto.createPublicKey({ key: der, format: 'der', type: 'spki' });
}

/** `publisher=key,…` merged with a JSON file `{publisher: key}`; unreadable entries are reported, not fatal. */
export function loadTrustedKeys(inline: string | null, file: string | null, warn: (m: string) => void): Map<string, crypto.KeyObject> {
  const keys = new Map<string, crypto.KeyObject>();
  const add = (publisher: string, key: string) => {
    try {
      const k = publicKeyFrom(key);
      if (k.asymmetricKeyType !== 'ed25519') throw new Error('not an Ed25519 key');
      keys.set(publisher, k);
    } catch (err) {
      warn(`plugin trusted key for '${publisher}' ignored: ${(err as Error).message}`);
    }
  };
  if (file) {
    try {
      const parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
      for (const [publisher, key] of Object.entries(parsed)) if (typeof key === 'string') add(publisher, key);
    } catch (err) {
      warn(`plugin trusted keys file unreadable: ${(err as Error).message}`);
    }
  }
  for (const part of (inline ?? '').split(',')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    add(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  return keys;
}

export type SignatureCheck =
  | { status: 'unsigned' }
  | { status: 'verified'; publisher: string }
  | { status: 'invalid'; reason: string };

/** Checks `dir`'s signature file against its files and the trusted keys. */
export function checkSignature(dir: string, digest: string, publisher: string | null, keys: ReadonlyMap<string, crypto.KeyObject>): SignatureCheck {
  let sig: SignatureFile | null;
  try {
    sig = readSignatureFile(dir);
  } catch (err) {
    return { status: 'invalid', reason: (err as Error).message };
  }
  if (!sig) return { status: 'unsigned' };
  if (sig.algorithm.toLowerCase() !== 'ed25519') return { status: 'invalid', reason: `unsupported signature algorithm '${sig.algorithm}'` };
  if (publisher !== null && sig.publisher !== publisher) {
    return { status: 'invalid', reason: `signature publisher '${sig.publisher}' is not the manifest's publisher '${publisher}'` };
  }
  if (sig.digest !== digest) return { status: 'invalid', reason: 'plugin files do not match the signed digest (tampered or modified after signing)' };
  const key = keys.get(sig.publisher);
  if (!key) return { status: 'invalid', reason: `no trusted key for publisher '${sig.publisher}'` };
  let ok = false;
  try {
    ok = crypto.verify(null, Buffer.from(SIGNED_PREFIX + digest, 'utf8'), key, Buffer.from(sig.signature, 'base64'));
  } catch {
    ok = false;
  }
  return ok ? { status: 'verified', publisher: sig.publisher } : { status: 'invalid', reason: `signature does not verify with the trusted key of '${sig.publisher}'` };
}

/** Signs a plugin directory (the publisher's side; used by tests and documented for plugin authors). */
export function signDirectory(dir: string, publisher: string, privateKey: crypto.KeyObject): SignatureFile {
  const digest = directoryDigest(dir);
  const signature = crypto.sign(null, Buffer.from(SIGNED_PREFIX + digest, 'utf8'), privateKey).toString('base64');
  const sig = { algorithm: 'ed25519', publisher, digest, signature };
  fs.writeFileSync(path.join(dir, SIGNATURE_FILE), `${JSON.stringify(sig, null, 2)}\n`);
  return sig;
}
