/**
 * Metadata of the secrets the loaded program declares (docs/operations.md § Secrets): which secrets
 * exist, where each comes from, whether the agent could resolve it now, when it was first seen and
 * how often it was rotated. Never a value: the program model drops literals, environment values are
 * never read (only whether the variable is set), and files are only checked for readability.
 * Not to be confused with agent/security/secrets.ts, the agent's own generated keys.
 */
import fs from 'node:fs';
import path from 'node:path';
import { API_VERSION } from '../../api/versions.js';
import { notFound } from '../core/errors.js';
import type { EventBus } from '../events/event-bus.js';
import { platformEvent } from '../events/platform-events.js';
import type { ProjectContext } from '../project/project-context.js';
import type { Program } from '../programs/language/ast.js';
import { loadProgram } from '../programs/program-files.js';
import { JsonStore } from '../state/json-store.js';

export const SECRET_METADATA_FILE = 'secret-metadata.json';

export type SecretSourceKind = 'env' | 'file' | 'literal';

/** What is kept per secret: where it comes from (a variable name or a path, never a value) and its rotation record. */
export interface SecretMetadataRecord {
  created_at_ms: number;
  source_kind: SecretSourceKind;
  /** The environment variable or the file path; null for a literal. */
  source_ref: string | null;
  robots: string[];
  rotation_count: number;
  last_rotated_at_ms: number | null;
  rotate_every_days: number | null;
}

interface SecretMetadataFile {
  secrets: Record<string, SecretMetadataRecord>;
}

/** The secrets one program declares, by name (the same name on several robots counts once; the first declaration wins). */
export function declaredSecrets(program: Program): Map<string, { source_kind: SecretSourceKind; source_ref: string | null; robots: string[] }> {
  const out = new Map<string, { source_kind: SecretSourceKind; source_ref: string | null; robots: string[] }>();
  for (const robot of program.robots) {
    for (const s of robot.secrets) {
      const known = out.get(s.name);
      if (known) {
        if (!known.robots.includes(robot.name)) known.robots.push(robot.name);
        continue;
      }
      const ref = s.source.kind === 'env' ? s.source.variable : s.source.kind === 'file' ? s.source.path : null;
      out.set(s.name, { source_kind: s.source.kind, source_ref: ref, robots: [robot.name] });
    }
  }
  return out;
}

function revive(raw: unknown): SecretMetadataFile {
  const r = raw as Partial<SecretMetadataFile> | null;
  if (!r || typeof r !== 'object' || !r.secrets || typeof r.secrets !== 'object' || Array.isArray(r.secrets)) throw new Error('expected {secrets: {...}}');
  const secrets: Record<string, SecretMetadataRecord> = {};
  for (const [name, v] of Object.entries(r.secrets)) {
    if (!v || typeof v !== 'object' || typeof v.created_at_ms !== 'number' || !['env', 'file', 'literal'].includes(v.source_kind)) continue;
    secrets[name] = {
      created_at_ms: v.created_at_ms,
      source_kind: v.source_kind,
      source_ref: typeof v.source_ref === 'string' ? v.source_ref : null,
      robots: Array.isArray(v.robots) ? v.robots.filter((x): x is string => typeof x === 'string') : [],
      rotation_count: Number.isInteger(v.rotation_count) ? v.rotation_count : 0,
      last_rotated_at_ms: typeof v.last_rotated_at_ms === 'number' ? v.last_rotated_at_ms : null,
      rotate_every_days: typeof v.rotate_every_days === 'number' ? v.rotate_every_days : null,
    };
  }
  return { secrets };
}

export interface SecretMetadataDeps {
  store: JsonStore<SecretMetadataFile>;
  project: ProjectContext;
  bus: EventBus;
  envVariableSet: (name: string) => boolean;
  now?: () => number;
}

const DAY_MS = 86_400_000;

export class SecretMetadataService {
  private readonly now: () => number;

  constructor(private readonly deps: SecretMetadataDeps) {
    this.now = deps.now ?? Date.now;
  }

  static async open(stateDir: string, deps: Omit<SecretMetadataDeps, 'store'>, onWarning?: (m: string) => void): Promise<SecretMetadataService> {
    const store = await JsonStore.open<SecretMetadataFile>(path.join(stateDir, SECRET_METADATA_FILE), {
      defaults: () => ({ secrets: {} }),
      revive,
      ...(onWarning ? { onWarning } : {}),
    });
    return new SecretMetadataService({ ...deps, store });
  }

  /**
   * Registers what the program declares now (the program is re-parsed when its file changed, so a
   * reloaded program is picked up on the next call). Returns the declared names, or null when no
   * program is loaded or it does not parse (then every stored secret is shown).
   */
  refresh(): Set<string> | null {
    const file = this.deps.project.programPath;
    if (!file) return null;
    let declared;
    try {
      declared = declaredSecrets(loadProgram(file));
    } catch {
      return null;
    }
    const stored = this.deps.store.data.secrets;
    const changed = [...declared].some(([name, d]) => {
      const s = stored[name];
      return !s || s.source_kind !== d.source_kind || s.source_ref !== d.source_ref || s.robots.join('\u0000') !== d.robots.join('\u0000');
    });
    if (changed) {
      const now = this.now();
      this.deps.store.change((data) => {
        for (const [name, d] of declared) {
          const s = data.secrets[name];
          data.secrets[name] = s
            ? { ...s, source_kind: d.source_kind, source_ref: d.source_ref, robots: d.robots }
            : { created_at_ms: now, ...d, rotation_count: 0, last_rotated_at_ms: null, rotate_every_days: null };
        }
      });
    }
    return new Set(declared.keys());
  }

  /** Whether the agent could read the secret now: the variable is set, or the file (inside the project root) is readable. */
  private resolvable(r: SecretMetadataRecord): boolean {
    if (r.source_kind === 'literal') return true;
    if (r.source_ref === null) return false;
    if (r.source_kind === 'env') return this.deps.envVariableSet(r.source_ref);
    const root = path.resolve(this.deps.project.projectRoot);
    const inside = (p: string) => {
      const rel = path.relative(root, p);
      return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
    };
    const file = path.resolve(root, r.source_ref);
    try {
      const real = fs.realpathSync(file);
      if (!inside(file) || !inside(real) || !fs.statSync(real).isFile()) return false;
      fs.accessSync(real, fs.constants.R_OK);
      return true;
    } catch {
      return false;
    }
  }

  private view(name: string, r: SecretMetadataRecord) {
    const from = r.last_rotated_at_ms ?? r.created_at_ms;
    return {
      name,
      created_at_ms: r.created_at_ms,
      ...(r.rotate_every_days !== null ? { rotation_due_at_ms: from + r.rotate_every_days * DAY_MS } : {}),
      ...(r.last_rotated_at_ms !== null ? { last_rotated_at_ms: r.last_rotated_at_ms } : {}),
      rotation_count: r.rotation_count,
      source_kind: r.source_kind,
      resolvable: this.resolvable(r),
      robots: r.robots,
    };
  }

  async list() {
    const declared = this.refresh();
    // A first sighting is recorded before the answer shows it (`created_at_ms` must survive a crash).
    if (this.deps.store.pending) await this.deps.store.commit();
    const stored = this.deps.store.data.secrets;
    const names = Object.keys(stored)
      .filter((n) => declared === null || declared.has(n))
      .sort();
    return { version: API_VERSION, secrets: names.map((n) => this.view(n, stored[n]!)) };
  }

  /** Records a rotation done at the source (the agent holds no value to rotate) and emits `SecretRotated`. */
  rotate(name: string, options: { rotate_every_days?: number | undefined }) {
    const declared = this.refresh();
    const known = this.deps.store.data.secrets[name];
    if (!known || (declared !== null && !declared.has(name))) throw notFound(`Unknown secret '${name}'`);
    const now = this.now();
    const record = this.deps.store.change((data) => {
      const r = data.secrets[name]!;
      r.rotation_count += 1;
      r.last_rotated_at_ms = now;
      if (options.rotate_every_days !== undefined) r.rotate_every_days = options.rotate_every_days;
      return { ...r };
    });
    this.deps.bus.publish(platformEvent('SecretRotated', 'svc-security', { name, rotation_count: record.rotation_count }, `secret/${name}`));
    return { version: API_VERSION, secret: this.view(name, record) };
  }

  flush(): Promise<void> {
    return this.deps.store.flush();
  }

  close(): Promise<void> {
    return this.deps.store.close();
  }
}
