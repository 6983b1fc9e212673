import fs from 'node:fs';
import path from 'node:path';
import { writeFileDurably } from '../state/durable-file.js';
import { READINESS_HISTORY_FILE } from './readiness-trends.js';

/** Entries kept in `<state dir>/readiness-history.json`; the oldest go first. */
export const READINESS_HISTORY_MAX_ENTRIES = 1000;

export interface ReadinessHistoryEntry {
  recorded_at: string;
  program: string;
  mission_ready: boolean;
  total_score: number;
  maximum_score: number;
  factors: Array<{ factor: string; score: number; weight: number; weighted: number }>;
}

/**
 * Appends one evaluation to the readiness history file (`svc readiness FILE --record`,
 * docs/observability.md § Readiness trends). The program is recorded by its file name, the label the
 * agent matches on, whatever path was typed. Written atomically and durably (temp file, fsync, rename).
 */
export async function appendReadinessHistory(
  stateDir: string,
  programFile: string,
  report: { mission_ready: boolean; score: { total: number; maximum: number; factors: ReadinessHistoryEntry['factors'] } },
  now = new Date(),
): Promise<ReadinessHistoryEntry> {
  const file = path.join(stateDir, READINESS_HISTORY_FILE);
  let entries: unknown[] = [];
  try {
    const raw = JSON.parse(fs.readFileSync(file, 'utf8')) as { entries?: unknown };
    if (Array.isArray(raw.entries)) entries = raw.entries;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`${file} is not a readiness history file: ${(err as Error).message}`);
  }
  const entry: ReadinessHistoryEntry = {
    recorded_at: now.toISOString(),
    program: path.basename(programFile),
    mission_ready: report.mission_ready,
    total_score: report.score.total,
    maximum_score: report.score.maximum,
    factors: report.score.factors.map((f) => ({ factor: f.factor, score: f.score, weight: f.weight, weighted: f.weighted })),
  };
  entries.push(entry);
  fs.mkdirSync(stateDir, { recursive: true });
  await writeFileDurably(file, `${JSON.stringify({ version: 1, entries: entries.slice(-READINESS_HISTORY_MAX_ENTRIES) }, null, 2)}\n`);
  return entry;
}
