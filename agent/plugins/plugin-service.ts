/**
 * Plugins (docs/plugins.md): install from a directory or a tarball inside the project, with the
 * manifest, trust tier, compatibility, capability and Ed25519 signature checks; enable/disable;
 * listing with control-center panels; panel bundles; search of the registry index.
 *
 * Storage: `<project root>/.svc-control-center/plugins/` holds `state.json` (`{plugins:{name: record}}`,
 * replaced atomically and fsynced before a mutation answers), one directory per installed plugin (the
 * verified copy) and `audit.jsonl` (hook dispatch lines). Reads never create the directory.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { API_VERSION } from '../../api/versions.js';
import { badRequest, conflict, notFound } from '../core/errors.js';
import type { ProjectContext } from '../project/project-context.js';
import { SVC_VERSION } from '../runtime/versions.js';
import { fsyncDir, writeFileDurably } from '../state/durable-file.js';
import {
  DANGEROUS_CAPABILITIES,
  isConfinedRelative,
  loadManifest,
  ManifestError,
  MANIFEST_FILE,
  PLUGIN_NAME,
  satisfies,
  TRUST_TIERS,
  type PluginManifest,
  type TrustTier,
} from './plugin-manifest.js';
import { checkDirectoryLimits, checkSignature, directoryDigest, loadTrustedKeys, MAX_PLUGIN_BYTES, PluginFilesError } from './plugin-signature.js';

export type PluginState = 'installed' | 'enabled' | 'disabled';

export interface PluginRecord {
  name: string;
  version: string;
  state: PluginState;
  trust_tier: TrustTier;
  plugin_type: string;
  /** Relative to the project root. */
  install_path: string;
  dangerous_approved: boolean;
  publisher: string | null;
  /** `verified` (a trusted Ed25519 signature matched the files) or `unsigned`. */
  signature: 'verified' | 'unsigned';
  /** Digest of the installed files (docs/plugins.md § Signatures); enable refuses a plugin whose files changed. */
  digest: string;
  installed_at_ms: number;
  updated_at_ms: number;
}

export interface RegistryEntry {
  name: string;
  description?: string;
  plugin_type?: string;
  publisher?: string;
  license?: string;
  tier?: TrustTier;
  versions: string[];
  version_checksums: Record<string, string>;
  version_signatures: Record<string, string>;
}

export interface PluginDeps {
  project: ProjectContext;
  trustedKeys: string | null;
  trustedKeysFile: string | null;
  registryIndex: string | null;
  requireSignature: boolean;
  warn: (message: string) => void;
  now?: () => number;
}

interface StateDoc {
  plugins: Record<string, PluginRecord>;
}

const ARCHIVE = /\.(tar\.gz|tgz|tar)$/i;
const SANDBOX_OPTIONAL: ReadonlySet<TrustTier> = new Set(['experimental', 'community']);
const SIGNATURE_REQUIRED: ReadonlySet<TrustTier> = new Set(['official', 'verified']);

const rejected = (reasons: string[]) => badRequest(`plugin install rejected: ${reasons.join('; ')}`);

export class PluginService {
  private state: StateDoc | null = null;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: PluginDeps) {}

  private now(): number {
    return (this.deps.now ?? Date.now)();
  }

  /** The project root, only when the agent was started with a configuration (`--config`). */
  private get root(): string | null {
    return this.deps.project.configPath === null ? null : this.deps.project.projectRoot;
  }

  private storeDir(root: string): string {
    return path.join(root, '.svc-control-center', 'plugins');
  }

  /**
   * A plugin's directory, derived from its (validated) name and the store, never from the recorded
   * `install_path`: an edited `state.json` cannot point the routes at other files.
   */
  private installDir(root: string, name: string): string {
    if (!PLUGIN_NAME.test(name)) throw notFound();
    return path.join(this.storeDir(root), name);
  }

  private load(root: string): StateDoc {
    if (this.state) return this.state;
    const file = path.join(this.storeDir(root), 'state.json');
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return (this.state = { plugins: {} });
      throw badRequest('plugin store unavailable');
    }
    try {
      const raw = JSON.parse(text) as StateDoc;
      if (typeof raw !== 'object' || raw === null || typeof raw.plugins !== 'object' || raw.plugins === null) throw new Error('shape');
      return (this.state = { plugins: raw.plugins });
    } catch {
      throw badRequest('plugin store unavailable');
    }
  }

  private async save(root: string, next: StateDoc): Promise<void> {
    const dir = this.storeDir(root);
    fs.mkdirSync(dir, { recursive: true });
    await writeFileDurably(path.join(dir, 'state.json'), `${JSON.stringify(next, null, 2)}\n`);
    this.state = next;
  }

  /** Mutations one at a time: two installs of one name must not interleave their directory swaps. */
  private serial<T>(run: () => Promise<T>): Promise<T> {
    const next = this.queue.then(run, run);
    this.queue = next.catch(() => undefined);
    return next;
  }

  // ---------------------------------------------------------------------------------------------
  // Registry index

  registry(): RegistryEntry[] {
    const file = this.deps.registryIndex;
    if (!file) return [];
    try {
      const raw = JSON.parse(fs.readFileSync(file, 'utf8')) as { plugins?: unknown };
      const list = Array.isArray(raw) ? raw : Array.isArray(raw.plugins) ? raw.plugins : [];
      return list
        .filter((e): e is Record<string, unknown> => typeof e === 'object' && e !== null && typeof (e as { name?: unknown }).name === 'string')
        .map((e) => ({
          name: e['name'] as string,
          ...(typeof e['description'] === 'string' ? { description: e['description'] } : {}),
          ...(typeof e['plugin_type'] === 'string' ? { plugin_type: e['plugin_type'] } : {}),
          ...(typeof e['publisher'] === 'string' ? { publisher: e['publisher'] } : {}),
          ...(typeof e['license'] === 'string' ? { license: e['license'] } : {}),
          ...((TRUST_TIERS as readonly unknown[]).includes(e['tier']) ? { tier: e['tier'] as TrustTier } : {}),
          versions: Array.isArray(e['versions']) ? (e['versions'] as unknown[]).filter((v): v is string => typeof v === 'string') : [],
          version_checksums: stringMap(e['version_checksums']),
          version_signatures: stringMap(e['version_signatures']),
        }))
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    } catch (err) {
      this.deps.warn(`plugin registry index unreadable: ${(err as Error).message}`);
      return [];
    }
  }

  private tierOf(name: string, index = this.registry()): TrustTier {
    return index.find((e) => e.name === name)?.tier ?? 'community';
  }

  search(q: string | undefined) {
    const needle = (q ?? '').trim().toLowerCase();
    const plugins = this.registry().filter(
      (e) => needle === '' || [e.name, e.description ?? '', e.plugin_type ?? ''].some((f) => f.toLowerCase().includes(needle)),
    );
    return { plugins, query: q ?? '' };
  }

  // ---------------------------------------------------------------------------------------------
  // Reads

  private entry(root: string, record: PluginRecord, index: RegistryEntry[]) {
    const base = {
      name: record.name,
      version: record.version,
      state: record.state,
      plugin_type: record.plugin_type,
      // The registry may have blocked or deprecated a plugin since it was installed: today's tier wins.
      trust_tier: index.find((e) => e.name === record.name)?.tier ?? record.trust_tier,
      installed: record,
    };
    try {
      const manifest = loadManifest(this.installDir(root, record.name), record.install_path);
      return { ...base, manifest, control_center_panels: manifest.control_center.panels };
    } catch {
      return { ...base, control_center_panels: [] };
    }
  }

  list() {
    const root = this.root;
    if (!root) return { plugins: [] };
    const doc = this.load(root);
    const index = this.registry();
    return { plugins: sortedRecords(doc).map((r) => this.entry(root, r, index)) };
  }

  controlCenter() {
    const root = this.root;
    if (!root) return { plugins: [] };
    const doc = this.load(root);
    const index = this.registry();
    return {
      plugins: sortedRecords(doc)
        .filter((r) => r.plugin_type === 'control-center-ui' && r.state === 'enabled')
        .map((r) => this.entry(root, r, index))
        // A UI plugin whose manifest no longer loads is left out rather than failing the panel list.
        .filter((e) => 'manifest' in e),
    };
  }

  bundle(name: string) {
    const root = this.root;
    if (!root) throw notFound();
    const record = Object.hasOwn(this.load(root).plugins, name) ? this.load(root).plugins[name]! : null;
    if (!record) throw notFound();
    const installDir = this.installDir(root, name);
    let manifest: PluginManifest;
    try {
      manifest = loadManifest(installDir, record.install_path);
    } catch {
      throw notFound();
    }
    const rel = manifest.control_center.bundle;
    const file = path.resolve(installDir, rel);
    if (!isConfinedRelative(rel) || !inside(installDir, file)) throw badRequest('bundle path escapes the plugin directory');
    const common = { plugin: name, signed: record.signature === 'verified', signature_check: 'install-time', sandbox: manifest.security.sandbox };
    let real: string;
    try {
      real = fs.realpathSync(file);
    } catch {
      return { ...common, bundle_path: path.posix.join(record.install_path.split(path.sep).join('/'), rel), available: false, hint: `build ${rel} in the plugin's install directory (${record.install_path})` };
    }
    // A link inside the installed copy must not lead the route out of it (the real path decides).
    if (!inside(fs.realpathSync(installDir), real)) throw badRequest('bundle path escapes the plugin directory');
    const data = fs.readFileSync(real);
    return {
      version: API_VERSION,
      ...common,
      available: true,
      content_type: 'application/javascript',
      bytes: data.length,
      sha256: crypto.createHash('sha256').update(data).digest('hex'),
      bundle: data.toString('utf8'),
    };
  }

  // ---------------------------------------------------------------------------------------------
  // Install

  install(body: { path?: string | undefined; name?: string | undefined; approve_dangerous?: boolean | undefined }) {
    return this.serial(() => this.installNow(body));
  }

  private async installNow(body: { path?: string | undefined; name?: string | undefined; approve_dangerous?: boolean | undefined }) {
    const root = this.root;
    if (!root) throw badRequest('project root unavailable');
    const doc = this.load(root);
    const store = this.storeDir(root);
    const source = this.resolveSource(root, store, body);
    fs.mkdirSync(store, { recursive: true });
    const staging = fs.mkdtempSync(path.join(store, '.staging-'));
    try {
      const stagedRoot = await this.stage(source, staging);
      const shown = path.relative(root, source) || '.';
      let manifest: PluginManifest;
      let digest: string;
      try {
        manifest = loadManifest(stagedRoot, shown);
        digest = directoryDigest(stagedRoot);
      } catch (err) {
        if (err instanceof ManifestError && err.message.startsWith('missing ')) throw badRequest(err.message);
        if (err instanceof ManifestError || err instanceof PluginFilesError) throw rejected([err.message]);
        throw err;
      }
      const name = manifest.plugin.name;
      const index = this.registry();
      const entry = index.find((e) => e.name === name) ?? null;
      const tier: TrustTier = entry?.tier ?? 'community';
      const reasons: string[] = [];
      if (tier === 'blocked') reasons.push(`plugin '${name}' is blocked by the registry`);
      if (!satisfies(SVC_VERSION, manifest.compatibility.svc_version)) {
        reasons.push(`needs svc ${manifest.compatibility.svc_version}, this agent is ${SVC_VERSION}`);
      }
      if (manifest.compatibility.api_version !== API_VERSION) reasons.push(`needs API ${manifest.compatibility.api_version}, this agent serves ${API_VERSION}`);
      if (entry && entry.versions.length > 0 && !entry.versions.includes(manifest.plugin.version)) {
        reasons.push(`version ${manifest.plugin.version} of '${name}' is not published in the registry`);
      }
      const checksum = entry?.version_checksums[manifest.plugin.version];
      if (checksum !== undefined && checksum !== digest) reasons.push('plugin files do not match the registry checksum');
      const keys = loadTrustedKeys(this.deps.trustedKeys, this.deps.trustedKeysFile, this.deps.warn);
      const sig = checkSignature(stagedRoot, digest, manifest.plugin.publisher, keys);
      if (sig.status === 'invalid') reasons.push(`signature check failed: ${sig.reason}`);
      else if (sig.status === 'unsigned') {
        if (SIGNATURE_REQUIRED.has(tier)) reasons.push(`a ${tier} plugin must carry a valid signature`);
        else if (manifest.security.signed) reasons.push('the manifest says signed but the plugin has no signature file');
        else if (this.deps.requireSignature) reasons.push('unsigned plugins are refused (SVC_PLUGIN_REQUIRE_SIGNATURE)');
      }
      const dangerous = manifest.capabilities.requires.filter((c) => DANGEROUS_CAPABILITIES.has(c));
      if (dangerous.length > 0 && body.approve_dangerous !== true) reasons.push(`dangerous capabilities need approve_dangerous: ${dangerous.join(', ')}`);
      if (!manifest.security.sandbox && !SANDBOX_OPTIONAL.has(tier)) reasons.push(`a ${tier} plugin must run sandboxed`);
      if (reasons.length > 0) throw rejected(reasons);

      // Swap the verified copy into place: what runs is exactly what was checked.
      const target = path.join(store, name);
      const old = fs.existsSync(target) ? `${target}.old-${crypto.randomBytes(4).toString('hex')}` : null;
      if (old) fs.renameSync(target, old);
      fs.renameSync(stagedRoot, target);
      fsyncDir(store);
      const now = this.now();
      const record: PluginRecord = {
        name,
        version: manifest.plugin.version,
        state: 'installed',
        trust_tier: tier,
        plugin_type: manifest.plugin.type,
        install_path: path.relative(root, target),
        dangerous_approved: dangerous.length > 0,
        publisher: manifest.plugin.publisher,
        signature: sig.status === 'verified' ? 'verified' : 'unsigned',
        digest,
        installed_at_ms: now,
        updated_at_ms: now,
      };
      try {
        await this.dispatch(store, manifest, name, 'on_install');
        await this.save(root, { plugins: { ...doc.plugins, [name]: record } });
      } catch (err) {
        // Roll back: the previous copy (if any) returns and nothing is recorded.
        fs.rmSync(target, { recursive: true, force: true });
        if (old) fs.renameSync(old, target);
        throw err;
      }
      if (old) fs.rmSync(old, { recursive: true, force: true });
      const warnings = tier === 'deprecated' ? [`plugin '${name}' is deprecated by the registry`] : [];
      return { ok: true, plugin: record, ...(warnings.length > 0 ? { warnings } : {}) };
    } finally {
      fs.rmSync(staging, { recursive: true, force: true });
    }
  }

  /** The source directory or archive, which must lie inside the project root and outside the store. */
  private resolveSource(root: string, store: string, body: { path?: string | undefined; name?: string | undefined }): string {
    // Inside the project, outside the store, and not a folder holding the store (the project root itself).
    const confined = (p: string) => inside(root, p) && !inside(store, p) && !inside(p, store);
    if (body.path !== undefined) {
      const p = path.resolve(root, body.path);
      if (!inside(root, p)) throw badRequest('plugin path must lie inside the project root');
      if (!confined(p)) throw badRequest('plugin path must not be or contain the plugin store');
      if (!fs.existsSync(p)) throw badRequest(`plugin path not found: ${body.path}`);
      // A link inside the project must not lead the install to files outside it.
      if (!inside(fs.realpathSync(root), fs.realpathSync(p))) throw badRequest('plugin path must lie inside the project root');
      return p;
    }
    if (body.name === undefined) throw badRequest('missing plugin name or path');
    const slug = body.name.replace(/^svc-plugin-/, '');
    const candidates = [body.name, path.join('examples', 'plugins', slug), path.join('examples', 'plugins', slug.replace(/-/g, '_'))];
    for (const c of candidates) {
      const p = path.resolve(root, c);
      if (confined(p) && fs.existsSync(path.join(p, MANIFEST_FILE))) return p;
    }
    throw badRequest(`plugin not found: ${body.name}; provide path or a registry name`);
  }

  /** Copies a directory or unpacks an archive into `staging`; returns the directory holding the manifest. */
  private async stage(source: string, staging: string): Promise<string> {
    const st = fs.lstatSync(source);
    const unpacked = path.join(staging, 'plugin');
    if (st.isDirectory()) {
      try {
        checkDirectoryLimits(source);
        // Links are copied as links, and the digest then refuses them.
        fs.cpSync(source, unpacked, { recursive: true, dereference: false, verbatimSymlinks: true });
      } catch (err) {
        if (err instanceof PluginFilesError) throw rejected([err.message]);
        throw badRequest(`plugin directory unreadable: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
      }
      return unpacked;
    }
    if (!st.isFile() || !ARCHIVE.test(source)) throw badRequest('plugin path must be a directory or a .tar.gz, .tgz or .tar archive');
    if (st.size > MAX_PLUGIN_BYTES) throw rejected(['plugin archive is too large']);
    fs.mkdirSync(unpacked);
    const reasons: string[] = [];
    let total = 0;
    // node-tar: `strict` turns its warnings (entries with `..`, absolute paths, bad checksums) into
    // errors; the filter keeps regular files and directories only, within the size limit.
    const tar = await import('tar');
    try {
      await tar.x({
        file: source,
        cwd: unpacked,
        strict: true,
        preservePaths: false,
        filter: (p: string, entry: unknown) => {
          const e = entry as { type?: string; size?: number };
          if (e.type !== 'File' && e.type !== 'OldFile' && e.type !== 'Directory') {
            reasons.push(`archive entry ${p} is a ${e.type ?? 'special entry'}`);
            return false;
          }
          total += e.size ?? 0;
          if (total > MAX_PLUGIN_BYTES) {
            reasons.push('plugin archive unpacks too large');
            return false;
          }
          return true;
        },
      });
    } catch (err) {
      throw rejected([`archive unreadable: ${(err as Error).message}`]);
    }
    if (reasons.length > 0) throw rejected([...new Set(reasons)]);
    if (fs.existsSync(path.join(unpacked, MANIFEST_FILE))) return unpacked;
    // `npm pack` style archives wrap the plugin in one top-level directory.
    const top = fs.readdirSync(unpacked, { withFileTypes: true });
    if (top.length === 1 && top[0]!.isDirectory()) return path.join(unpacked, top[0]!.name);
    return unpacked;
  }

  // ---------------------------------------------------------------------------------------------
  // Enable / disable

  setState(name: string, to: 'enabled' | 'disabled') {
    return this.serial(async () => {
      const root = this.root;
      if (!root) throw badRequest('project root unavailable');
      const doc = this.load(root);
      const record = Object.hasOwn(doc.plugins, name) ? doc.plugins[name]! : null;
      if (!record) throw notFound(`plugin not installed: ${name}`);
      const installDir = this.installDir(root, name);
      let manifest: PluginManifest;
      try {
        manifest = loadManifest(installDir, record.install_path);
      } catch (err) {
        if (to === 'enabled') throw conflict(`plugin '${name}' cannot be enabled: ${(err as Error).message}`);
        manifest = null as unknown as PluginManifest;
      }
      if (to === 'enabled') {
        if (this.tierOf(name) === 'blocked') throw badRequest(`plugin '${name}' is blocked by the registry`);
        // Files changed since the verified install (edited, replaced, or tampered): refuse to run them.
        let digest: string;
        try {
          digest = directoryDigest(installDir);
        } catch (err) {
          throw conflict(`plugin '${name}' cannot be enabled: ${(err as Error).message}`);
        }
        if (digest !== record.digest) throw conflict(`plugin '${name}' files changed since install (digest mismatch); reinstall it`);
      }
      if (manifest) await this.dispatch(this.storeDir(root), manifest, name, to === 'enabled' ? 'on_enable' : 'on_disable');
      const next: PluginRecord = { ...record, state: to, updated_at_ms: this.now() };
      await this.save(root, { plugins: { ...doc.plugins, [name]: next } });
      return { ok: true, name, state: to };
    });
  }

  /**
   * Hook dispatch. The agent runs no plugin code (no WebAssembly runtime): a hook the manifest enables
   * (or every hook when it lists none) is recorded in `audit.jsonl` as not executed, fsynced.
   */
  private async dispatch(store: string, manifest: PluginManifest, name: string, hook: string): Promise<void> {
    if (manifest.hooks.enabled.length > 0 && !manifest.hooks.enabled.includes(hook)) return;
    const line = `${JSON.stringify({ plugin: name, hook, message: 'hook not executed (no runtime)', at: new Date(this.now()).toISOString() })}\n`;
    const fh = await fs.promises.open(path.join(store, 'audit.jsonl'), 'a', 0o600);
    try {
      await fh.writeFile(line);
      await fh.sync();
    } finally {
      await fh.close();
    }
  }
}

function stringMap(v: unknown): Record<string, string> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return {};
  return Object.fromEntries(Object.entries(v).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

function sortedRecords(doc: StateDoc): PluginRecord[] {
  return Object.values(doc.plugins).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** `child` is `parent` or below it (lexically). */
function inside(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

