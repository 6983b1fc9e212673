import crypto from 'node:crypto';
import fs from 'node:fs';
import { JsonlLog, readJsonl, setAsideTornTail } from '../state/jsonl-log.js';

/** One record of the hash-chained audit (api-behaviour §10.10). */
export interface AuditRecord {
  id: string;
  timestamp: string;
  event_type: string;
  /** JSON text of the event's payload. */
  payload: string;
  hash: string;
  signature: string;
  signer_id: string;
  signing_key: null;
  previous_hash: string;
}

export interface ChainVerification {
  valid: boolean;
  /** Id of the first record that does not verify (or `line-<n>` for an unreadable line). */
  breakAt: string | null;
  reason: string | null;
  /** A final line torn by a crash mid-append: reported, not a break. */
  tornTail: boolean;
  /** Records signed under an earlier signing key (after a secret rotation): hash-checked only. */
  foreignSigner: number;
}

export const AUDIT_CHAIN_FILE = 'control-center-audit-chain.jsonl';
export const SIGNER_PREFIX = 'svc-control-center/';

export function recordHash(timestamp: string, eventType: string, payload: string, previousHash: string): string {
  return crypto.createHash('sha256').update(`${timestamp}|${eventType}|${payload}|${previousHash}`, 'utf8').digest('hex');
}

/**
 * Append-only, hash-chained audit log. Each record's hash covers its content and the previous hash;
 * its signature is an HMAC of that hash with a key derived from the session secret, so a record
 * cannot be rewritten (and the chain re-hashed) by someone who can edit the file but does not hold
 * the secret. Every append is fsynced. The chain is re-verified when the agent starts.
 */
export class AuditChain {
  private readonly log: JsonlLog<AuditRecord>;
  private readonly records: AuditRecord[] = [];
  private readonly key: Buffer;
  /** Names the signing key (a fingerprint, never the key) so rotated keys can be told apart. */
  readonly signerId: string;
  readonly verification: ChainVerification;
  /** Where the bytes of a torn last line were moved at start (null when there was none). */
  readonly tornTailSetAside: string | null = null;

  constructor(readonly file: string, signingSecret: string) {
    this.key = crypto.createHmac('sha256', signingSecret).update('svc audit chain signing key v1').digest();
    this.signerId = SIGNER_PREFIX + crypto.createHash('sha256').update(this.key).digest('hex').slice(0, 16);
    this.log = new JsonlLog<AuditRecord>(file, { fsync: true });
    this.verification = this.load();
    // The chain is opened for append: a torn last line must not stay where the next record would
    // follow it (it would become a permanent break). It was never acknowledged, so it goes aside
    // and the chain continues from the last complete record (docs/security.md §10).
    if (this.verification.tornTail) this.tornTailSetAside = setAsideTornTail(file);
  }

  private sign(hash: string): string {
    return crypto.createHmac('sha256', this.key).update(hash).digest('hex');
  }

  private load(): ChainVerification {
    const result: ChainVerification = { valid: true, breakAt: null, reason: null, tornTail: false, foreignSigner: 0 };
    if (!fs.existsSync(this.file)) return result;
    const text = fs.readFileSync(this.file, 'utf8');
    const lines = text.split('\n');
    // Without a final newline, the last line is an append a crash cut short.
    const tornIndex = text.endsWith('\n') ? -1 : lines.length - 1;
    let previous = '';
    let seenCurrentSigner = false;
    const fail = (at: string, reason: string) => {
      if (result.valid) {
        result.valid = false;
        result.breakAt = at;
        result.reason = reason;
      }
    };
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!;
      if (line.trim() === '') continue;
      let r: AuditRecord;
      try {
        r = JSON.parse(line) as AuditRecord;
      } catch {
        if (i === tornIndex) {
          result.tornTail = true;
          continue;
        }
        fail(`line-${i + 1}`, 'unreadable record');
        continue;
      }
      this.records.push(r);
      if (!result.valid) continue;
      if (r.previous_hash !== previous) fail(r.id, 'previous_hash does not match the preceding record');
      else if (recordHash(r.timestamp, r.event_type, r.payload, r.previous_hash) !== r.hash) fail(r.id, 'hash does not match the record content');
      else if (r.signer_id !== this.signerId) {
        // Records of an earlier key may only precede ours: the first record we signed covers their
        // hashes through its previous_hash, so they cannot be rewritten unnoticed.
        if (seenCurrentSigner) fail(r.id, 'record signed by an unknown key after records of the current key');
        else result.foreignSigner++;
      } else if (r.signature !== this.sign(r.hash)) fail(r.id, 'signature does not verify');
      else seenCurrentSigner = true;
      previous = r.hash;
    }
    return result;
  }

  append(eventType: string, payload: Record<string, unknown> | string, now = new Date()): AuditRecord {
    const previous = this.records.at(-1);
    const timestamp = now.toISOString();
    const payloadText = typeof payload === 'string' ? payload : JSON.stringify(payload);
    const previousHash = previous?.hash ?? '';
    const hash = recordHash(timestamp, eventType, payloadText, previousHash);
    const record: AuditRecord = {
      id: `audit-${this.nextNumber(previous)}`,
      timestamp,
      event_type: eventType,
      payload: payloadText,
      hash,
      signature: this.sign(hash),
      signer_id: this.signerId,
      signing_key: null,
      previous_hash: previousHash,
    };
    this.log.append(record);
    this.records.push(record);
    return record;
  }

  private nextNumber(previous: AuditRecord | undefined): number {
    const n = previous ? Number(/^audit-(\d+)$/.exec(previous.id)?.[1] ?? this.records.length) : 0;
    return n + 1;
  }

  all(): readonly AuditRecord[] {
    return this.records;
  }

  close(): void {
    this.log.close();
  }
}

/** Re-reads a chain file (for tools and tests). */
export function readAuditFile(file: string): AuditRecord[] {
  return readJsonl<AuditRecord>(file).records;
}
