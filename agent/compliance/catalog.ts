/**
 * The signed compliance template catalogue (docs/governance.md § Signed compliance catalogue).
 *
 * A catalogue is a directory with `catalog.json` — `{publisher?, entries: [{name, version, file,
 * content_sha256, signature}]}` — and one JSON template file per entry. An entry is `verified` only
 * when a publisher public key is configured (`SVC_COMPLIANCE_CATALOG_PUBKEY`), the SHA-256 of the
 * file's bytes equals the manifest's `content_sha256`, and `signature` (hex or base64) is a valid
 * Ed25519 signature of those bytes under that key. Anything else — no key, an edited file, a forged
 * or missing signature — is `verified: false` with the reason. Without a catalogue directory the
 * built-in templates (the five regulated profiles, serialised from the built-in definitions) are
 * listed, unsigned, so they never verify. The evaluation always uses the built-in profile; a
 * verified template only supplies the description shown in exports.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { keyError as errorText, publicKeyFrom, keyText, verifyEd25519 } from '../governance/signing.js';
import { findComplianceProfile, type ComplianceProfile } from './profiles.js';

export const SIGNED_TEMPLATE_PROFILES = ['defense', 'medical', 'iso26262', 'iso13849', 'iec61508'] as const;
export const TEMPLATE_VERSION = '1.0.0';

export interface CatalogEntry {
  name: string;
  version: string;
  verified: boolean;
  content_sha256: string;
  description: string;
  /** Why the entry does not verify (absent when it does). */
  reason?: string;
}

export interface CatalogResult {
  entries: CatalogEntry[];
  /** `builtin` or `directory`. */
  source: 'builtin' | 'directory';
  publisher_key_configured: boolean;
  publisher_key_id?: string;
  /** The catalogue could not be read at all (then `entries` is empty). */
  error?: string;
}

/** The template document of a built-in profile (the bytes a publisher would sign). */
export function templateJson(p: ComplianceProfile): string {
  return `${JSON.stringify(
    {
      name: p.name,
      version: TEMPLATE_VERSION,
      description: p.description,
      requirements: {
        requires_kill_switch: p.requiresKillSwitch,
        min_readiness_score: p.minReadinessScore,
        required_capabilities: p.requiredCapabilities,
        min_health_checks: p.minHealthChecks,
        requires_assurance_case: p.requiresAssuranceCase,
        max_speed_mps: p.maxSpeedMps,
        operation_hours: p.operationHours,
        requires_secure_comm: p.requiresSecureComm,
        requires_tamper_policy: p.requiresTamperPolicy,
        requires_secure_boot: p.requiresSecureBoot,
      },
    },
    null,
    2,
  )}\n`;
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

function describe(bytes: Buffer, fallback: string): string {
  try {
    const d = (JSON.parse(bytes.toString('utf8')) as Record<string, unknown>)['description'];
    return typeof d === 'string' ? d : fallback;
  } catch {
    return fallback;
  }
}

interface ManifestEntry {
  name?: unknown;
  version?: unknown;
  file?: unknown;
  content_sha256?: unknown;
  signature?: unknown;
}

/** Loads and verifies the catalogue now (it is small; the routes call this per request so file edits show at once). */
export function loadCatalog(options: { dir: string | null; publisherKey: string | null }): CatalogResult {
  let pub: ReturnType<typeof publicKeyFrom> | null = null;
  let keyError: string | null = null;
  if (options.publisherKey) {
    try {
      pub = publicKeyFrom(keyText(options.publisherKey));
    } catch (err) {
      keyError = `SVC_COMPLIANCE_CATALOG_PUBKEY unusable: ${errorText(err)}`;
    }
  }
  const keyInfo = { publisher_key_configured: pub !== null, ...(pub ? { publisher_key_id: createHash('sha256').update(pub.export({ type: 'spki', format: 'der' })).digest('hex').slice(0, 16) } : {}) };
  const noKey = keyError ?? 'no publisher key configured (SVC_COMPLIANCE_CATALOG_PUBKEY)';

  if (!options.dir) {
    const entries = SIGNED_TEMPLATE_PROFILES.map((name): CatalogEntry => {
      const p = findComplianceProfile(name)!;
      const bytes = Buffer.from(templateJson(p), 'utf8');
      return { name, version: TEMPLATE_VERSION, verified: false, content_sha256: sha256(bytes), description: p.description, reason: pub ? 'built-in template carries no publisher signature' : noKey };
    });
    return { entries, source: 'builtin', ...keyInfo };
  }

  let manifest: { entries?: unknown };
  try {
    manifest = JSON.parse(fs.readFileSync(path.join(options.dir, 'catalog.json'), 'utf8')) as { entries?: unknown };
    if (!manifest || typeof manifest !== 'object' || !Array.isArray(manifest.entries)) throw new Error('catalog.json has no entries list');
  } catch (err) {
    return { entries: [], source: 'directory', ...keyInfo, error: `compliance catalogue unreadable: ${errorText(err)}` };
  }
  const root = path.resolve(options.dir);
  const entries: CatalogEntry[] = [];
  for (const raw of manifest.entries as ManifestEntry[]) {
    if (!raw || typeof raw !== 'object' || typeof raw.name !== 'string' || typeof raw.file !== 'string') continue;
    const name = raw.name;
    const version = typeof raw.version === 'string' ? raw.version : TEMPLATE_VERSION;
    const fallback = findComplianceProfile(name)?.description ?? '';
    const file = path.resolve(root, raw.file);
    if (!file.startsWith(root + path.sep)) {
      entries.push({ name, version, verified: false, content_sha256: '', description: fallback, reason: 'template file outside the catalogue directory' });
      continue;
    }
    let bytes: Buffer;
    try {
      bytes = fs.readFileSync(file);
    } catch (err) {
      entries.push({ name, version, verified: false, content_sha256: '', description: fallback, reason: `template unreadable: ${errorText(err)}` });
      continue;
    }
    const digest = sha256(bytes);
    const description = describe(bytes, fallback);
    let reason: string | null = null;
    if (!pub) reason = noKey;
    else if (typeof raw.content_sha256 !== 'string' || raw.content_sha256.toLowerCase() !== digest) reason = 'content hash does not match the manifest';
    else if (typeof raw.signature !== 'string' || raw.signature === '') reason = 'entry is not signed';
    else if (!verifyEd25519(bytes, raw.signature, pub)) reason = 'signature does not verify under the publisher key';
    entries.push({ name, version, verified: reason === null, content_sha256: digest, description, ...(reason ? { reason } : {}) });
  }
  return { entries, source: 'directory', ...keyInfo };
}
