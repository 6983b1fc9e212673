import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { DEFAULT_AUDIT_SEGMENT_BYTES } from '../settings/settings.js';
import { fsyncDir } from '../state/durable-file.js';
import { JsonlLog, readLines, setAsideTornTail } from '../state/jsonl-log.js';
import type { AuditRecord } from '../../api/domains/audit.js';

export type { AuditRecord };

export interface ChainVerification {
  valid: boolean;
  /** Id of the first record that does not verify (or `line-<n>`, `<sealed segment>:line-<n>` for an unreadable line). */
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

export interface AuditChainOptions {
  /**
   * Seal the current file into the next numbered segment once it reaches this many bytes; 0 never
   * seals. Default `DEFAULT_AUDIT_SEGMENT_BYTES`.
   */
  segmentBytes?: number;
}

/** `<dir>/control-center-audit-chain.jsonl` → `<dir>/control-center-audit-chain.000042.jsonl`. */
export function segmentFile(file: string, n: number): string {
  const ext = path.extname(file);
  return `${file.slice(0, file.length - ext.length)}.${String(n).padStart(6, '0')}${ext}`;
}

/** Sealed segments of a chain, oldest first, as `{n, file}`. */
export function sealedSegments(file: string): Array<{ n: number; file: string }> {
  const dir = path.dirname(file);
  const ext = path.extname(file);
  const stem = path.basename(file, ext);
  const pattern = new RegExp(`^${stem.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.(\\d{6,})${ext.replace('.', '\\.')}$`);
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return names
    .map((name) => ({ name, m: pattern.exec(name) }))
    .filter((x): x is { name: string; m: RegExpExecArray } => x.m !== null)
    .map((x) => ({ n: Number(x.m[1]), file: path.join(dir, x.name) }))
    .sort((a, b) => a.n - b.n);
}

/** Every file of a chain in chain order: sealed segments oldest first, then the current file. */
export function chainFiles(file: string): string[] {
  const files = sealedSegments(file).map((s) => s.file);
  if (fs.existsSync(file)) files.push(file);
  return files;
}

/**
 * Append-only, hash-chained audit log. Each record's hash covers its content and the previous hash;
 * its signature is an HMAC of that hash with a key derived from the session secret, so a record
 * cannot be rewritten (and the chain re-hashed) by someone who can edit the file but does not hold
 * the secret. Every append is fsynced before the mutation it records is answered. The chain is
 * re-verified when the agent starts.
 *
 * The chain is segmented (docs/security.md §10, "Files"): once the current file reaches
 * `segmentBytes` it is sealed by renaming it to the next numbered segment, and the next record
 * starts a new current file whose first `previous_hash` is the last hash of the sealed one, so the
 * chain runs unbroken across segments. Nothing keeps the records in memory: verification streams the
 * files line by line keeping only the last hash and counters, and readers stream them with
 * `records()`. (Before, every record stayed in an array for the life of the process, about 2.4 KB of
 * heap each, and the whole file was read into one string at start.)
 */
export class AuditChain {
  private readonly log: JsonlLog<AuditRecord>;
  private readonly key: Buffer;
  private readonly segmentBytes: number;
  /** Hash and number of the last record, which the next one chains to. */
  private lastHash = '';
  private lastNumber = 0;
  private recordCount = 0;
  private currentBytes = 0;
  private nextSegment = 1;
  /** Names the signing key (a fingerprint, never the key) so rotated keys can be told apart. */
  readonly signerId: string;
  readonly verification: ChainVerification;
  /** Where the bytes of a torn last line were moved at start (null when there was none). */
  readonly tornTailSetAside: string | null = null;

  constructor(readonly file: string, signingSecret: string, options: AuditChainOptions = {}) {
    this.key = crypto.createHmac('sha256', signingSecret).update('svc audit chain signing key v1').digest();
    this.signerId = SIGNER_PREFIX + crypto.createHash('sha256').update(this.key).digest('hex').slice(0, 16);
    this.segmentBytes = options.segmentBytes ?? DEFAULT_AUDIT_SEGMENT_BYTES;
    // Appends are fsynced as a group by the commit every answered mutation waits for (and in the
    // background otherwise): durable before the 2xx without a blocking fsync per record.
    this.log = new JsonlLog<AuditRecord>(file, { fsync: 'group' });
    this.verification = this.load();
    // The chain is opened for append: a torn last line must not stay where the next record would
    // follow it (it would become a permanent break). It was never acknowledged, so it goes aside
    // and the chain continues from the last complete record (docs/security.md §10).
    if (this.verification.tornTail) this.tornTailSetAside = setAsideTornTail(file);
    this.currentBytes = fs.existsSync(file) ? fs.statSync(file).size : 0;
  }

  private sign(hash: string): string {
    return crypto.createHmac('sha256', this.key).update(hash).digest('hex');
  }

  /** Streams every file once, in chain order, keeping only the last hash and counters. */
  private load(): ChainVerification {
    const result: ChainVerification = { valid: true, breakAt: null, reason: null, tornTail: false, foreignSigner: 0 };
    const segments = sealedSegments(this.file);
    this.nextSegment = (segments.at(-1)?.n ?? 0) + 1;
    const files = segments.map((s) => ({ file: s.file, current: false }));
    if (fs.existsSync(this.file)) files.push({ file: this.file, current: true });
    let previous = '';
    let seenCurrentSigner = false;
    const fail = (at: string, reason: string) => {
      if (result.valid) {
        result.valid = false;
        result.breakAt = at;
        result.reason = reason;
      }
    };
    for (const { file, current } of files) {
      const where = current ? '' : `${path.basename(file)}:`;
      for (const { text: line, number, terminated } of readLines(file)) {
        if (line.trim() === '') continue;
        let r: AuditRecord;
        try {
          r = JSON.parse(line) as AuditRecord;
        } catch {
          // Without a final newline, the last line of the current file is an append a crash cut
          // short. A sealed segment was complete when sealed, so there it is damage.
          if (current && !terminated) {
            result.tornTail = true;
            continue;
          }
          fail(`${where}line-${number}`, 'unreadable record');
          continue;
        }
        this.recordCount++;
        this.lastNumber = Number(/^audit-(\d+)$/.exec(String(r.id))?.[1] ?? this.recordCount);
        this.lastHash = typeof r.hash === 'string' ? r.hash : '';
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
    }
    return result;
  }

  append(eventType: string, payload: Record<string, unknown> | string, now = new Date()): AuditRecord {
    const timestamp = now.toISOString();
    const payloadText = typeof payload === 'string' ? payload : JSON.stringify(payload);
    const previousHash = this.lastHash;
    const hash = recordHash(timestamp, eventType, payloadText, previousHash);
    const record: AuditRecord = {
      id: `audit-${this.lastNumber + 1}`,
      timestamp,
      event_type: eventType,
      payload: payloadText,
      hash,
      signature: this.sign(hash),
      signer_id: this.signerId,
      signing_key: null,
      previous_hash: previousHash,
    };
    const line = JSON.stringify(record);
    this.log.appendSerialised([line]);
    this.lastHash = hash;
    this.lastNumber++;
    this.recordCount++;
    this.currentBytes += Buffer.byteLength(line, 'utf8') + 1;
    if (this.segmentBytes > 0 && this.currentBytes >= this.segmentBytes) this.seal();
    return record;
  }

  /**
   * Renames the current file to the next segment number. A rename is atomic: after a crash the
   * record is either still in the current file or in the sealed segment, never in both or neither.
   * The next append creates a new current file.
   */
  private seal(): void {
    this.log.release();
    const target = segmentFile(this.file, this.nextSegment);
    if (fs.existsSync(target)) throw new Error(`audit segment ${target} already exists`);
    fs.renameSync(this.file, target);
    fsyncDir(path.dirname(this.file));
    this.nextSegment++;
    this.currentBytes = 0;
  }

  /** Number of readable records across all segments. */
  get count(): number {
    return this.recordCount;
  }

  /** The chain's files in order: sealed segments oldest first, then the current file. */
  files(): string[] {
    return chainFiles(this.file);
  }

  /** Streams the records from the files, oldest first (one line in memory at a time). */
  *records(): Generator<AuditRecord> {
    yield* readAuditChain(this.file);
  }

  close(): void {
    this.log.close();
  }
}

/** Streams every readable record of a chain (all segments, then the current file), oldest first. */
export function* readAuditChain(file: string): Generator<AuditRecord> {
  for (const f of chainFiles(file)) yield* readAuditFile(f);
}

/** Streams the readable records of one chain file (for tools and tests); unreadable lines are skipped. */
export function* readAuditFile(file: string): Generator<AuditRecord> {
  for (const { text } of readLines(file)) {
    if (text.trim() === '') continue;
    try {
      yield JSON.parse(text) as AuditRecord;
    } catch {
      /* a torn or damaged line: verification reports it */
    }
  }
}
