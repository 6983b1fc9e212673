import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import type { RolloutBody } from '../../api/domains/ota.js';
import { API_VERSION } from '../../api/versions.js';
import { badRequest, conflict } from '../core/errors.js';
import type { DeviceHub } from '../devices/device-hub.js';
import type { DevicePool } from '../devices/device-pool.js';
import type { DeviceRegistry } from '../devices/device-registry.js';
import { flashFirmware, previousImage } from '../devices/firmware-flash.js';
import type { AlertService } from '../observability/alerts.js';
import type { ProgramService } from '../programs/program-service.js';
import type { ProjectContext } from '../project/project-context.js';
import { resolveProjectConfig } from '../project/resolve-config.js';
import type { OtaSettings } from '../settings/settings.js';
import { writeFileDurably } from '../state/durable-file.js';
import { JsonStore } from '../state/json-store.js';
import { canonicalBundle, verifyBundle } from './bundle.js';
import { configHash, deviceConfigChanges, loadBackup, mergeInstalled, pruneBackups, readCurrent, saveBackup, writeFiles, type InstalledConfigFile } from './config-files.js';
import { switchServedProgram, targetStateFile } from './served-program.js';
import { firmwareDevices, unknownDevices } from './targets.js';

/**
 * This agent as a deploy target (docs/operations.md § Rollouts, "This agent as a target"): it installs
 * a rollout bundle another control center sends (`POST /v1/rollout`), goes back to the previous one
 * (`POST /v1/rollback`), and reports its status and readiness. The program source of each version is
 * written atomically to `<state dir>/ota/programs/<version>.sd` and becomes the served program; the
 * record of current and previous installs is `<state dir>/ota/target-state.json`. Configuration files
 * of a bundle are written into the project root, with what they replaced kept (`config-files.ts`).
 */
export interface Install {
  version: string;
  program_file: string | null;
  program_hash: string | null;
  /** Devices flashed by this install, with the version each runs. */
  firmware: { device_id: string; version: string }[];
  /** Configuration files OTA installs have delivered and that are in effect with this install (absent in older records). */
  config_files?: InstalledConfigFile[];
  /** The backup of what the files this install changed held before (`config-files.ts`), or null. */
  config_backup?: string | null;
  signature_verified: boolean;
  installed_at_ms: number;
}

export interface TargetState {
  target: string | null;
  current: Install | null;
  previous: Install | null;
  history: { at_ms: number; action: 'rollout' | 'rollback'; version: string; ok: boolean; detail?: string }[];
}

export interface TargetDeps {
  settings: { stateDir: string; ota: OtaSettings };
  project: ProjectContext;
  programs: ProgramService;
  devices: DeviceRegistry;
  devicePool: DevicePool;
  deviceHub: DeviceHub;
  alerts: AlertService;
}

const VERSION_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const sha256 = (data: string | Uint8Array) => createHash('sha256').update(data).digest('hex');

export class TargetService {
  private busy = false;
  /** The program the agent was started with (`--program`), served again when a rollback reaches an install without a program. */
  private readonly startProgram: string | null;

  private constructor(
    private readonly deps: TargetDeps,
    private readonly store: JsonStore<TargetState>,
    startProgram: string | null,
  ) {
    this.startProgram = startProgram;
  }

  static async open(deps: TargetDeps, startProgram: string | null, warn: (m: string) => void): Promise<TargetService> {
    const store = await JsonStore.open<TargetState>(targetStateFile(deps.settings.stateDir), {
      defaults: () => ({ target: null, current: null, previous: null, history: [] }),
      onWarning: warn,
    });
    return new TargetService(deps, store, startProgram);
  }

  close(): Promise<void> {
    return this.store.close();
  }

  private verifyKey(): string | null {
    return this.deps.settings.ota.verifyKey ?? this.deps.settings.ota.signingKey;
  }

  private fwDeps() {
    const d = this.deps;
    return { deviceHub: d.deviceHub, devices: d.devices, alerts: d.alerts, stateDir: d.settings.stateDir };
  }

  private record(action: 'rollout' | 'rollback', version: string, ok: boolean, detail?: string): void {
    this.store.change((s) => {
      s.history.push({ at_ms: Date.now(), action, version, ok, ...(detail ? { detail } : {}) });
      if (s.history.length > 50) s.history.splice(0, s.history.length - 50);
    });
  }

  /** `POST /v1/rollout`. Refusals of the bundle itself are 400s; an install that fails on a device answers `ok:false`. */
  async receive(body: RolloutBody) {
    // The signature first: nothing of a bundle that does not verify is looked at further.
    const key = this.verifyKey();
    let verified = false;
    if (key) {
      const why = verifyBundle(canonicalBundle(body), body.artifact_signature ?? null, key);
      if (why) throw badRequest(`rollout refused: ${why}`);
      verified = true;
    }
    if (!VERSION_NAME.test(body.version)) throw badRequest(`invalid field 'version': '${body.version}' cannot name a program file (letters, digits, '.', '_', '-')`);
    const program = body.program ?? null;
    if (program !== null) {
      const hash = sha256(program);
      if (body.program_hash && body.program_hash !== hash) throw badRequest('rollout refused: program_hash does not match the program source');
      const { parseSource } = await import('../programs/program-files.js');
      parseSource(program, `${body.version}.sd`);
    }
    const images = (body.firmware ?? []).map((f) => {
      const bytes = Buffer.from(f.image_base64, 'base64');
      if (sha256(bytes) !== f.image_sha256) throw badRequest(`rollout refused: firmware ${f.version} image does not match its image_sha256`);
      return { item: f, bytes: new Uint8Array(bytes) };
    });
    const configFiles = this.checkConfigFiles(body);
    const missing = images.flatMap(({ item }) => unknownDevices(this.deps.devices, item));
    if (missing.length > 0) {
      return { ok: false, target: body.target, version: body.version, previous_version: this.store.data.current?.version ?? null, error: `firmware for unknown device '${missing[0]}'` };
    }
    if (this.busy) throw conflict('a rollout or rollback is already being installed');
    this.busy = true;
    const previousVersion = this.store.data.current?.version ?? null;
    try {
      // Firmware first: the program switches only once every device took its image.
      const flashed: { device_id: string; version: string }[] = [];
      for (const { item, bytes } of images) {
        for (const dev of firmwareDevices(this.deps.devices, item)) {
          const r = await flashFirmware(this.fwDeps(), dev.id, bytes, item.version).catch((err: Error) => ({ ok: false, outcome: { result: 'error', detail: err.message } }) as const);
          if (!r.ok) {
            await this.reflashPrevious(flashed);
            const error = `firmware ${item.version} on ${dev.id}: ${r.outcome.result}: ${r.outcome.detail}`;
            this.record('rollout', body.version, false, error);
            return { ok: false, target: body.target, version: body.version, previous_version: previousVersion, error };
          }
          flashed.push({ device_id: dev.id, version: item.version });
        }
      }
      // Configuration next, program last: the new program is analysed (readiness, the gate a control
      // center measures after the update) against the configuration it was built for, so it must never
      // be served against the old one; and a configuration that does not resolve is undone here, while
      // the old program still runs (docs/operations.md § Rollouts, "Configuration in a bundle").
      let configBackup: string | null = null;
      if (configFiles.length > 0) {
        const applied = await this.applyConfig(body.version, configFiles);
        if ('error' in applied) {
          await this.reflashPrevious(flashed);
          const error = `configuration: ${applied.error}`;
          this.record('rollout', body.version, false, error);
          return { ok: false, target: body.target, version: body.version, previous_version: previousVersion, error };
        }
        configBackup = applied.backup;
      }
      const installedConfig = mergeInstalled(this.store.data.current?.config_files ?? [], configFiles.map((f) => ({ path: f.path, sha256: f.sha256 })));
      let programFile: string | null = this.store.data.current?.program_file ?? this.startProgram;
      let programHash: string | null = this.store.data.current?.program_hash ?? null;
      if (program !== null) {
        const dir = path.join(this.deps.settings.stateDir, 'ota', 'programs');
        fs.mkdirSync(dir, { recursive: true });
        programFile = path.join(dir, `${body.version}.sd`);
        await writeFileDurably(programFile, program);
        programHash = sha256(program);
      }
      const install: Install = {
        version: body.version,
        program_file: programFile,
        program_hash: programHash,
        firmware: flashed,
        config_files: installedConfig,
        config_backup: configBackup,
        signature_verified: verified,
        installed_at_ms: Date.now(),
      };
      this.store.change((s) => {
        s.target = body.target;
        s.previous = s.current;
        s.current = install;
      });
      this.record('rollout', body.version, true);
      await this.store.commit();
      this.pruneConfigBackups();
      switchServedProgram(this.deps.project, this.deps.programs, programFile);
      return {
        ok: true,
        target: body.target,
        version: body.version,
        previous_version: previousVersion,
        program_hash: programHash,
        signature_verified: verified,
        firmware: flashed,
        config_files: installedConfig,
        config_hash: configHash(installedConfig),
      };
    } finally {
      this.busy = false;
    }
  }

  /**
   * The bundle's configuration files, checked before anything is installed: a project to write them
   * into, each content matching its signed digest, each one TOML.
   */
  private checkConfigFiles(body: RolloutBody): { path: string; sha256: string; content: string }[] {
    const files = body.config_files ?? [];
    if (files.length === 0) return [];
    if (!this.deps.project.configPath) throw badRequest('rollout refused: this agent has no --config project to write configuration into');
    for (const f of files) {
      if (sha256(f.content) !== f.sha256) throw badRequest(`rollout refused: configuration file ${f.path} does not match its sha256`);
      try {
        parseToml(f.content);
      } catch (err) {
        throw badRequest(`rollout refused: configuration file ${f.path} is not valid TOML: ${(err as Error).message.split('\n')[0]}`);
      }
    }
    return files;
  }

  private projectDir(): string {
    return path.dirname(this.deps.project.configPath!);
  }

  /**
   * Resolves the project configuration from disk again and makes it the live one (for the program
   * analyses too), with changed configured device values put on the device pool; the error text when
   * it does not resolve.
   */
  private reloadConfig(): string | null {
    try {
      const config = resolveProjectConfig(this.deps.project.configPath!);
      const changes = deviceConfigChanges(this.deps.project.config, config);
      this.deps.project.config = config;
      this.deps.programs.workspace.config = config;
      for (const c of changes) if (this.deps.devices.get(c.id)) this.deps.devices.update(c.id, c.changes);
      return null;
    } catch (err) {
      return (err as Error).message;
    }
  }

  /**
   * Keeps what `files` replace (durably, first), writes them, and resolves the configuration again.
   * When it does not resolve, the kept content goes back and the live configuration stays the old one.
   */
  private async applyConfig(version: string, files: { path: string; content: string }[]): Promise<{ backup: string } | { error: string }> {
    const stateDir = this.deps.settings.stateDir;
    const root = this.projectDir();
    const backup = `${version}-${Date.now()}`;
    const before = readCurrent(root, files.map((f) => f.path));
    await saveBackup(stateDir, backup, before);
    let error: string | null;
    try {
      await writeFiles(root, files);
      error = this.reloadConfig();
      if (error === null) await this.deps.devices.flush();
    } catch (err) {
      error = `write failed: ${(err as Error).message}`;
    }
    if (error === null) return { backup };
    await writeFiles(root, before);
    this.reloadConfig();
    pruneBackups(stateDir, [this.store.data.current?.config_backup, this.store.data.previous?.config_backup]);
    return { error: `the project configuration does not resolve with the bundle's files (previous files restored): ${error}` };
  }

  private pruneConfigBackups(): void {
    const s = this.store.data;
    pruneBackups(this.deps.settings.stateDir, [s.current?.config_backup, s.previous?.config_backup]);
  }

  /**
   * Rollback of the current install's configuration: the files it changed get back what they held
   * before it (a file it created is deleted). What they hold now is kept as the backup of the install
   * that becomes current, so rolling back once more returns to it.
   */
  private async restoreConfig(current: Install, becomesCurrent: boolean): Promise<{ backup: string | null; error: string | null }> {
    if (!current.config_backup) return { backup: null, error: null };
    const stateDir = this.deps.settings.stateDir;
    const before = loadBackup(stateDir, current.config_backup);
    if (!before) return { backup: null, error: `the configuration kept before ${current.version} is missing` };
    if (!this.deps.project.configPath) return { backup: null, error: 'this agent has no --config project' };
    const root = this.projectDir();
    let backup: string | null = null;
    if (becomesCurrent) {
      backup = `rollback-${Date.now()}`;
      await saveBackup(stateDir, backup, readCurrent(root, before.map((f) => f.path)));
    }
    await writeFiles(root, before);
    const error = this.reloadConfig();
    await this.deps.devices.flush();
    return { backup, error: error ? `the restored configuration does not resolve: ${error}` : null };
  }

  private async reflashPrevious(devices: { device_id: string }[]): Promise<{ device_id: string; ok: boolean; detail: string }[]> {
    const out = [];
    for (const d of devices) {
      const prev = previousImage(this.deps.settings.stateDir, d.device_id);
      if (!prev) {
        out.push({ device_id: d.device_id, ok: false, detail: 'no previous image kept' });
        continue;
      }
      const r = await flashFirmware(this.fwDeps(), d.device_id, new Uint8Array(prev.bytes), prev.image.version).catch((err: Error) => ({ ok: false, outcome: { result: 'error', detail: err.message } }));
      out.push({ device_id: d.device_id, ok: r.ok, detail: r.ok ? `re-flashed ${prev.image.version}` : r.outcome.detail });
    }
    return out;
  }

  /**
   * `POST /v1/rollback`: the previous install becomes current again (its program, and the previous
   * images of the devices the current install flashed). After a first install, "previous" is what the
   * agent ran before it: the program it was started with and the devices' kept images.
   */
  async rollback(target: string | undefined) {
    const s = this.store.data;
    if (target && s.target && target !== s.target) throw badRequest(`this agent is deploy target '${s.target}', not '${target}'`);
    if (!s.current) {
      return { ok: false, target: s.target ?? target ?? null, version: null, previous_version: s.previous?.version ?? null, error: 'no installed version to roll back' };
    }
    if (this.busy) throw conflict('a rollout or rollback is already being installed');
    this.busy = true;
    try {
      const current = s.current;
      const previous = s.previous;
      const firmware = await this.reflashPrevious(current.firmware);
      const config = await this.restoreConfig(current, previous !== null);
      const programFile = previous?.program_file && fs.existsSync(previous.program_file) ? previous.program_file : this.startProgram;
      this.store.change((x) => {
        // The install that becomes current names what THIS rollback changed (null: nothing), so a
        // further rollback undoes exactly that.
        x.current = previous ? { ...previous, config_backup: config.backup } : null;
        x.previous = current;
      });
      const firmwareOk = firmware.every((f) => f.ok);
      const ok = firmwareOk && config.error === null;
      const error = [firmwareOk ? null : 'a device could not be re-flashed', config.error].filter(Boolean).join('; ');
      this.record('rollback', previous?.version ?? '(before the first rollout)', ok, ok ? undefined : error);
      await this.store.commit();
      this.pruneConfigBackups();
      switchServedProgram(this.deps.project, this.deps.programs, programFile);
      const configFiles = previous?.config_files ?? [];
      return { ok, target: s.target, version: previous?.version ?? null, previous_version: current.version, firmware, config_files: configFiles, config_hash: configHash(configFiles), ...(ok ? {} : { error }) };
    } finally {
      this.busy = false;
    }
  }

  /** `GET /v1/status` (the shape drift and control centers read). */
  status() {
    const s = this.store.data;
    const target = s.target;
    const [robot, hardware] = target ? target.split('@') : [null, null];
    const devices = this.deps.devices.list();
    const file = this.deps.programs.workspace.programPath;
    let hash = s.current?.program_hash ?? null;
    if (!hash && file) {
      try {
        hash = sha256(fs.readFileSync(file));
      } catch {
        hash = null;
      }
    }
    return {
      ok: true,
      target,
      current_version: s.current?.version ?? null,
      previous_version: s.previous?.version ?? null,
      healthy: !devices.some((d) => d.health_status === 'offline'),
      program: file ? path.basename(file) : null,
      program_hash: hash,
      robot_name: robot ?? null,
      hardware_profile: hardware ?? null,
      firmware_version: s.current?.firmware[0]?.version ?? null,
      packages: this.deps.project.config?.packages ?? [],
      signature_verified: s.current?.signature_verified ?? false,
      boot_state: 'normal',
      // Additive: the configuration files OTA installs delivered (config-files.ts#configHash).
      config_hash: configHash(s.current?.config_files),
    };
  }

  /** `GET /v1/readiness`: the device pool's readiness impact, and the served program's readiness when there is one. */
  async readiness(query: { runtime?: string | undefined; inject_health_faults?: string | undefined }) {
    const devices = this.deps.devicePool.readinessImpact();
    let program: { mission_ready: boolean; status: string; score: number } | { mission_ready: false; error: string } | null = null;
    if (this.deps.programs.workspace.programPath) {
      try {
        const r = await this.deps.programs.run('readiness', {});
        program = { mission_ready: r.report.mission_ready, status: r.report.status, score: r.report.score.total };
      } catch (err) {
        program = { mission_ready: false, error: (err as Error).message };
      }
    }
    const ready = devices.mission_ready && (program?.mission_ready ?? true);
    return {
      version: API_VERSION,
      ok: true,
      mission_ready: ready,
      readiness: { mission_ready: ready, devices: devices.impact, program, runtime: query.runtime === 'true', inject_health_faults: query.inject_health_faults === 'true' },
    };
  }
}
