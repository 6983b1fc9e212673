/**
 * Recovery knowledge (docs/program-language.md §12, §28): entries learned from earlier recoveries, read
 * from `recovery_knowledge.json` in the STATE directory (the caller passes the path; never the
 * process working directory), merged with entries synthesised from a failure analysis of the
 * program (GPS, Camera, Lidar, LTE, WiFi, Battery, Provider, Package scenarios).
 *
 * File format (either form): `[entry, …]` or `{"entries": [entry, …]}` with
 * `entry = {failure (or issue), actions: [string], classification?, success_rate?}`.
 * A missing file is an empty store; an unreadable one is reported with its error.
 */
import * as fs from 'node:fs';
import type { Program } from '../language/ast.js';
import type { ResolvedConfig } from '../../project/resolve-config.js';
import { classifyFailure, defaultActions, type FailureClassification } from './recovery-actions.js';

export interface KnowledgeEntry {
  failure: string;
  classification: FailureClassification | string;
  actions: string[];
  success_rate: number | null;
  source: 'store' | 'analysis';
}

export interface KnowledgeReport {
  path: string | null;
  loaded: boolean;
  error: string | null;
  entries: KnowledgeEntry[];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function storeEntry(value: unknown): KnowledgeEntry | null {
  if (!isObject(value)) return null;
  const failure = typeof value['failure'] === 'string' ? value['failure'] : typeof value['issue'] === 'string' ? value['issue'] : null;
  const actions = Array.isArray(value['actions']) ? value['actions'].filter((a): a is string => typeof a === 'string' && a !== '') : [];
  if (failure === null || failure === '' || actions.length === 0) return null;
  const rate = value['success_rate'];
  return {
    failure,
    classification: typeof value['classification'] === 'string' ? value['classification'] : classifyFailure(failure),
    actions,
    success_rate: typeof rate === 'number' && Number.isFinite(rate) ? rate : null,
    source: 'store',
  };
}

export function readKnowledgeStore(file: string | null | undefined): { loaded: boolean; error: string | null; entries: KnowledgeEntry[] } {
  if (!file) return { loaded: false, error: null, entries: [] };
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { loaded: false, error: code === 'ENOENT' ? null : (error as Error).message, entries: [] };
  }
  try {
    const parsed: unknown = JSON.parse(text);
    const list = Array.isArray(parsed) ? parsed : isObject(parsed) && Array.isArray(parsed['entries']) ? parsed['entries'] : null;
    if (list === null) return { loaded: false, error: 'expected an array of entries or {"entries": [...]}', entries: [] };
    return { loaded: true, error: null, entries: list.map(storeEntry).filter((e): e is KnowledgeEntry => e !== null) };
  } catch (error) {
    return { loaded: false, error: (error as Error).message, entries: [] };
  }
}

/**
 * Whether a trigger condition (or knowledge entry) applies to an issue: either contains the
 * other, or every dot-separated part of the issue appears in it (`gps.lost` ~ `robot.gps.lost`).
 */
export function conditionMatches(condition: string, issue: string): boolean {
  const c = condition.toLowerCase();
  const i = issue.toLowerCase();
  if (c === '' || i === '') return false;
  if (c.includes(i) || i.includes(c)) return true;
  return i.split('.').every((part) => part !== '' && c.includes(part));
}

/**
 * The best stored entry for an issue: an entry whose failure matches beats one that only shares
 * the classification; then the higher success rate; then file order.
 */
export function bestKnowledgeEntry(entries: readonly KnowledgeEntry[], issue: string, classification: FailureClassification): KnowledgeEntry | null {
  let best: { entry: KnowledgeEntry; rank: number; rate: number } | null = null;
  for (const entry of entries) {
    if (entry.source !== 'store') continue;
    const rank = conditionMatches(entry.failure, issue) ? 2 : entry.classification === classification && classification !== 'Unknown' ? 1 : 0;
    if (rank === 0) continue;
    const rate = entry.success_rate ?? 0;
    if (best === null || rank > best.rank || (rank === best.rank && rate > best.rate)) best = { entry, rank, rate };
  }
  return best?.entry ?? null;
}

/** Failure scenarios the program is exposed to, from what it declares. */
function analysedScenarios(program: Program, config: ResolvedConfig | null): string[] {
  const sensors = new Set(program.robots.flatMap((r) => r.sensors.map((s) => s.type.toLowerCase())));
  const links = new Set(program.hardware.flatMap((h) => h.connectivity.map((c) => c.toLowerCase())));
  const scenarios: string[] = [];
  if (sensors.has('gps') || sensors.has('gnss')) scenarios.push('gps.failed');
  if ([...sensors].some((s) => s.includes('camera'))) scenarios.push('camera.failed');
  if (sensors.has('lidar')) scenarios.push('lidar.failed');
  if (links.has('lte') || links.has('fiveg')) scenarios.push('lte.lost');
  if ([...links].some((l) => l.startsWith('wifi'))) scenarios.push('wifi.lost');
  const battery = program.hardware.some((h) => (h.batteryWh ?? 0) > 0) || program.robots.some((r) => r.missions.some((m) => m.durationHours !== null));
  if (battery) scenarios.push('battery.low');
  if ((config?.providers.length ?? 0) > 0) scenarios.push('provider.failed');
  if (program.imports.length > 0 || (config?.packages.length ?? 0) > 0) scenarios.push('package.failed');
  return scenarios;
}

export function knowledgeReport(
  program: Program,
  config: ResolvedConfig | null,
  knowledgePath: string | null | undefined,
): KnowledgeReport {
  const store = readKnowledgeStore(knowledgePath);
  const analysed: KnowledgeEntry[] = analysedScenarios(program, config).map((failure) => {
    const classification = classifyFailure(failure);
    return { failure, classification, actions: defaultActions(failure, classification), success_rate: null, source: 'analysis' };
  });
  return { path: knowledgePath ?? null, loaded: store.loaded, error: store.error, entries: [...store.entries, ...analysed] };
}
