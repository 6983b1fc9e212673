/**
 * Ed25519 keys of the governance area (docs/governance.md § Keys): the instance key that signs
 * policy assignments, and the compliance catalogue publisher's public key. A key setting holds the
 * key itself (PEM, or a JWK with `"kty":"OKP"`) or the path of a PEM file.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { writeNewFileSync } from '../state/durable-file.js';

/** An error's text without file system paths (answers and logs never name where keys live; docs/security.md). */
export const keyError = (err: unknown): string => (err as NodeJS.ErrnoException).code ?? (err as Error).message;

/** The key text of a setting: inline PEM/JWK as is, anything else read as a file path. */
export function keyText(value: string): string {
  const v = value.trim();
  if (v.startsWith('-----BEGIN') || v.startsWith('{')) return v;
  return fs.readFileSync(v, 'utf8');
}

function jwk(text: string): Record<string, unknown> | null {
  if (!text.startsWith('{')) return null;
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return null;
  }
}

/** An Ed25519 public key from a public or private key's text (a private key gives its public half). */
export function publicKeyFrom(text: string): KeyObject {
  const j = jwk(text);
  const isPrivate = j ? typeof j['d'] === 'string' : /PRIVATE KEY/.test(text);
  const key = isPrivate ? createPublicKey(j ? createPrivateKey({ key: j as never, format: 'jwk' }) : createPrivateKey(text)) : j ? createPublicKey({ key: j as never, format: 'jwk' }) : createPublicKey(text);
  if (key.asymmetricKeyType !== 'ed25519') throw new Error(`expected an Ed25519 key, got ${key.asymmetricKeyType}`);
  return key;
}

export function privateKeyFrom(text: string): KeyObject {
  const j = jwk(text);
  const key = j ? createPrivateKey({ key: j as never, format: 'jwk' }) : createPrivateKey(text);
  if (key.asymmetricKeyType !== 'ed25519') throw new Error(`expected an Ed25519 private key, got ${key.asymmetricKeyType}`);
  return key;
}

/** First 16 hex characters of SHA-256 over the public key's SPKI DER: names the key in records. */
export function keyId(pub: KeyObject): string {
  return createHash('sha256').update(pub.export({ type: 'spki', format: 'der' })).digest('hex').slice(0, 16);
}

export const publicPem = (pub: KeyObject): string => pub.export({ type: 'spki', format: 'pem' }).toString();

/** Whether `signature` (hex or base64) is a valid Ed25519 signature of `data`; false on any malformed input. */
export function verifyEd25519(data: Buffer | string, signature: string, pub: KeyObject): boolean {
  const s = signature.trim();
  const bytes = /^[0-9a-f]{128}$/i.test(s) ? Buffer.from(s, 'hex') : Buffer.from(s, 'base64');
  if (bytes.length !== 64) return false;
  try {
    return verify(null, Buffer.isBuffer(data) ? data : Buffer.from(data, 'utf8'), pub, bytes);
  } catch {
    return false;
  }
}

export interface SigningKey {
  privateKey: KeyObject;
  publicKey: KeyObject;
  keyId: string;
  /** `setting` (SVC_GOVERNANCE_SIGNING_KEY) or `generated` (kept in the state directory). */
  source: 'setting' | 'generated';
}

export const GENERATED_KEY_FILE = 'governance-signing-key.pem';

/**
 * The instance's policy signing key: the configured one, else one generated on first use and kept
 * (mode 0600) in the state directory, so signatures stay verifiable across restarts.
 */
export function loadSigningKey(setting: string | null, stateDir: string, options: { create?: boolean } = {}): SigningKey | null {
  let privateKey: KeyObject;
  let source: SigningKey['source'];
  if (setting) {
    try {
      privateKey = privateKeyFrom(keyText(setting));
    } catch (err) {
      throw new Error(`SVC_GOVERNANCE_SIGNING_KEY unusable: ${keyError(err)}`);
    }
    source = 'setting';
  } else {
    const file = path.join(stateDir, GENERATED_KEY_FILE);
    if (!fs.existsSync(file)) {
      // Verification never creates a key: without the file nothing it signed can verify.
      if (options.create === false) return null;
      fs.mkdirSync(stateDir, { recursive: true });
      const pair = generateKeyPairSync('ed25519');
      writeNewFileSync(file, pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), 0o600);
    }
    privateKey = privateKeyFrom(fs.readFileSync(file, 'utf8'));
    source = 'generated';
  }
  const publicKey = createPublicKey(privateKey);
  return { privateKey, publicKey, keyId: keyId(publicKey), source };
}

export const signEd25519 = (data: string, key: KeyObject): string => sign(null, Buffer.from(data, 'utf8'), key).toString('hex');
