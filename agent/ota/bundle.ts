import { createHmac, createPrivateKey, createPublicKey, sign, timingSafeEqual, verify, type KeyObject } from 'node:crypto';

/**
 * The signed rollout bundle (docs/operations.md § Rollouts, "Signed bundles"). What is signed is the
 * canonical form: compact JSON with object keys sorted, of
 * `{version, program, program_hash, assignments, certifications, firmware?, config_files?}` where
 * `program` is the program SOURCE TEXT, each firmware item is `{version, image_sha256,
 * device_type?|device_ids?}` (the image bytes travel beside it and are checked against
 * `image_sha256`) and each configuration file is `{path, sha256}` (its TOML text travels beside it as
 * `content` and is checked against `sha256`), so a changed name or content fails verification.
 *
 * Key rule for `SVC_OTA_SIGNING_KEY`: a value starting `-----BEGIN` (PEM) or a JSON object with
 * `"kty":"OKP"` (JWK) is an Ed25519 private key and signs with Ed25519 (`ed25519:<base64>`); any other
 * value is an HMAC-SHA256 secret (`hmac-sha256:<hex>`). A target verifies with `SVC_OTA_VERIFY_KEY` (an
 * Ed25519 public key as PEM/JWK, or the HMAC secret), else with its own signing key (the same secret,
 * or the public half of the Ed25519 key). The key offered in a bundle is never trusted.
 */
export interface BundleFirmware {
  version: string;
  image_sha256: string;
  device_type?: string | undefined;
  device_ids?: string[] | undefined;
}

export interface BundleConfigFile {
  path: string;
  sha256: string;
}

export interface CanonicalBundle {
  version: string;
  program: string | null;
  program_hash: string | null;
  assignments: { robot_name: string; hardware: string }[];
  certifications: string[];
  firmware?: BundleFirmware[];
  config_files?: BundleConfigFile[];
}

export function canonicalJson(value: unknown): string {
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const k of Object.keys(v).sort()) {
        const x = (v as Record<string, unknown>)[k];
        if (x !== undefined) out[k] = walk(x);
      }
      return out;
    }
    return v;
  };
  return JSON.stringify(walk(value));
}

/** The signed part of a rollout body (extra fields such as the image bytes are not part of it). */
export function canonicalBundle(body: {
  version: string;
  program?: string | null | undefined;
  program_hash?: string | null | undefined;
  assignments?: { robot_name: string; hardware: string }[] | undefined;
  certifications?: string[] | undefined;
  firmware?: (BundleFirmware & { image_base64?: string })[] | undefined;
  config_files?: (BundleConfigFile & { content?: string })[] | undefined;
}): CanonicalBundle {
  const bundle: CanonicalBundle = {
    version: body.version,
    program: body.program ?? null,
    program_hash: body.program_hash ?? null,
    assignments: (body.assignments ?? []).map((a) => ({ robot_name: a.robot_name, hardware: a.hardware })),
    certifications: [...(body.certifications ?? [])],
  };
  if (body.firmware && body.firmware.length > 0) {
    bundle.firmware = body.firmware.map((f) => ({
      version: f.version,
      image_sha256: f.image_sha256,
      ...(f.device_type !== undefined ? { device_type: f.device_type } : {}),
      ...(f.device_ids !== undefined ? { device_ids: [...f.device_ids] } : {}),
    }));
  }
  if (body.config_files && body.config_files.length > 0) {
    bundle.config_files = body.config_files.map((f) => ({ path: f.path, sha256: f.sha256 }));
  }
  return bundle;
}

type Key = { kind: 'hmac'; secret: Buffer } | { kind: 'ed25519-private'; key: KeyObject } | { kind: 'ed25519-public'; key: KeyObject };

function isJwk(text: string): Record<string, unknown> | null {
  try {
    const v = JSON.parse(text) as Record<string, unknown>;
    return v && typeof v === 'object' && v['kty'] === 'OKP' ? v : null;
  } catch {
    return null;
  }
}

/** Reads a key by the rule above; `role` says whether a private key is expected (signing) or either. */
export function parseKey(text: string, name: string): Key {
  const trimmed = text.trim();
  const jwk = isJwk(trimmed);
  if (trimmed.startsWith('-----BEGIN') || jwk) {
    try {
      const isPrivate = jwk ? typeof jwk['d'] === 'string' : /PRIVATE KEY/.test(trimmed);
      const key = isPrivate
        ? jwk
          ? createPrivateKey({ key: jwk as never, format: 'jwk' })
          : createPrivateKey(trimmed)
        : jwk
          ? createPublicKey({ key: jwk as never, format: 'jwk' })
          : createPublicKey(trimmed);
      if (key.asymmetricKeyType !== 'ed25519') throw new Error(`expected an Ed25519 key, got ${key.asymmetricKeyType}`);
      return isPrivate ? { kind: 'ed25519-private', key } : { kind: 'ed25519-public', key };
    } catch (err) {
      throw new Error(`${name}: ${(err as Error).message}`);
    }
  }
  return { kind: 'hmac', secret: Buffer.from(text, 'utf8') };
}

export interface BundleSignature {
  artifact_signature: string;
  artifact_public_key: string | null;
}

export function signBundle(bundle: CanonicalBundle, signingKey: string): BundleSignature {
  const key = parseKey(signingKey, 'SVC_OTA_SIGNING_KEY');
  const data = Buffer.from(canonicalJson(bundle), 'utf8');
  if (key.kind === 'hmac') return { artifact_signature: `hmac-sha256:${createHmac('sha256', key.secret).update(data).digest('hex')}`, artifact_public_key: null };
  if (key.kind === 'ed25519-public') throw new Error('SVC_OTA_SIGNING_KEY: an Ed25519 public key cannot sign; give the private key');
  return {
    artifact_signature: `ed25519:${sign(null, data, key.key).toString('base64')}`,
    artifact_public_key: createPublicKey(key.key).export({ type: 'spki', format: 'pem' }).toString(),
  };
}

/** `null` when the signature verifies, else why not. */
export function verifyBundle(bundle: CanonicalBundle, signature: string | null | undefined, verifyKey: string): string | null {
  if (!signature) return 'bundle is not signed';
  const key = parseKey(verifyKey, 'SVC_OTA_VERIFY_KEY');
  const data = Buffer.from(canonicalJson(bundle), 'utf8');
  const [scheme, value = ''] = signature.split(/:(.*)/s, 2) as [string, string?];
  if (key.kind === 'hmac') {
    if (scheme !== 'hmac-sha256') return `bundle signed with ${scheme}, expected hmac-sha256`;
    const expected = createHmac('sha256', key.secret).update(data).digest();
    const given = Buffer.from(value, 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected) ? null : 'bundle signature does not verify';
  }
  if (scheme !== 'ed25519') return `bundle signed with ${scheme}, expected ed25519`;
  const pub = key.kind === 'ed25519-private' ? createPublicKey(key.key) : key.key;
  try {
    return verify(null, data, pub, Buffer.from(value, 'base64')) ? null : 'bundle signature does not verify';
  } catch {
    return 'bundle signature does not verify';
  }
}
