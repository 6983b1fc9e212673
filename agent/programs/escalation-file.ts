/**
 * The CLI's view of the escalation store (docs/decisions.md § Escalations): the same file the agent
 * keeps (`SVC_DECISION_ESCALATION_STORE`, else `<state dir>/decision-escalations.json`). Grants are
 * read once, when a run first asks; pending escalations are collected during the run and written by
 * `commit()` through the decisions domain's store, so a run that raises none touches no file.
 */
import fs from 'node:fs';
import path from 'node:path';
import { addPendingEscalation, ESCALATION_FILE, openEscalationStore } from '../decisions/decision-stores.js';
import type { EscalationRecord } from './runtime/escalations.js';
import type { WorkspaceEscalations } from './program-workspace.js';

export class EscalationFile implements WorkspaceEscalations {
  private granted: Set<string> | null = null;
  private readonly queued: EscalationRecord[] = [];

  constructor(
    readonly file: string,
    private readonly nowMs: () => number,
  ) {}

  static forSettings(stateDir: string, storeFile: string | null, simTimeMs: number | null): EscalationFile {
    return new EscalationFile(storeFile ?? path.join(stateDir, ESCALATION_FILE), () => simTimeMs ?? Date.now());
  }

  isGranted(id: string): boolean {
    this.granted ??= readGranted(this.file);
    return this.granted.has(id);
  }

  registerPending(record: EscalationRecord): void {
    this.queued.push(record);
  }

  async commit(): Promise<void> {
    if (this.queued.length === 0) return;
    const records = this.queued.splice(0);
    const store = await openEscalationStore(this.file);
    try {
      for (const r of records) addPendingEscalation(store, r, this.nowMs());
      await store.commit();
    } finally {
      await store.close();
    }
  }
}

function readGranted(file: string): Set<string> {
  try {
    const doc = JSON.parse(fs.readFileSync(file, 'utf8')) as { granted?: unknown };
    return new Set(doc.granted && typeof doc.granted === 'object' && !Array.isArray(doc.granted) ? Object.keys(doc.granted) : []);
  } catch {
    return new Set();
  }
}
