import fs from 'node:fs';
import { ApiError } from '../core/errors.js';
import { writeFileDurablySync } from '../state/durable-file.js';
import type { ConfigApprovalRequest, ConfigApprovalStatus, ConfigApprovalVote } from '../../api/domains/config-control.js';

export type { ConfigApprovalRequest, ConfigApprovalStatus, ConfigApprovalVote };

interface QueueFile {
  requests: ConfigApprovalRequest[];
}

/**
 * The approval queue `<state dir>/config-approvals.json` (`{requests:[…]}`, oldest first, unbounded).
 * Every call reads the file and every change rewrites it atomically and durably before the caller
 * answers. A file that does not parse is never replaced: reads and writes answer 500 until an
 * operator repairs it, so a damaged queue cannot silently lose its requests.
 */
export class ApprovalStore {
  private lastMs = 0;

  constructor(readonly file: string) {}

  read(): ConfigApprovalRequest[] {
    let text: string;
    try {
      text = fs.readFileSync(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw new ApiError(500, 'internal_error', `config approval queue unreadable: ${(err as Error).message}`);
    }
    try {
      const doc = JSON.parse(text) as Partial<QueueFile>;
      if (!doc || typeof doc !== 'object' || !Array.isArray(doc.requests)) throw new Error('expected {requests:[...]}');
      return doc.requests;
    } catch (err) {
      throw new ApiError(500, 'internal_error', `config approval queue is corrupt and was left untouched: ${(err as Error).message}`);
    }
  }

  write(requests: ConfigApprovalRequest[]): void {
    writeFileDurablySync(this.file, `${JSON.stringify({ requests }, null, 2)}\n`, 0o600);
  }

  /** `approval-<epoch ms><3 digits>`, unique within the queue. */
  nextId(now: number, taken: readonly ConfigApprovalRequest[]): string {
    let micros = Math.max(now * 1000, this.lastMs + 1);
    const ids = new Set(taken.map((r) => r.id));
    while (ids.has(`approval-${micros}`)) micros++;
    this.lastMs = micros;
    return `approval-${micros}`;
  }
}
