import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fsyncDir, writeFileDurably, writeNewFileSync } from '../state/durable-file.js';
import type { AlertService } from '../observability/alerts.js';
import type { FirmwareOutcome } from './attachments/attachment.js';
import type { DeviceHub } from './device-hub.js';
import type { DeviceRegistry } from './device-registry.js';

/**
 * One firmware update of one device through the firmware bridge, as `POST /v1/devices/{id}/firmware`
 * and OTA rollouts both do it (docs/devices.md, docs/operations.md § Rollouts): chunked transfer with
 * per-chunk acknowledgement, image verification, activation and the device's self-test (a device whose
 * self-test fails rolls itself back). The registry then holds the version the device reports, and a
 * non-activation raises a warning alert.
 *
 * Every activated image is kept under `<state dir>/ota/images/<sha256>.bin` with an index of each
 * device's current and previous image, so a rollout can put the previous image back (rollback).
 */
export interface FirmwareFlashDeps {
  deviceHub: DeviceHub;
  devices: DeviceRegistry;
  alerts: AlertService;
  stateDir: string;
}

export interface FirmwareFlashResult {
  ok: boolean;
  device_id: string;
  outcome: FirmwareOutcome;
  firmware_version: string | null;
  duration_ms: number;
}

export interface KeptImage {
  version: string;
  sha256: string;
  size: number;
  flashed_at_ms: number;
}

interface ImageIndex {
  devices: Record<string, { current: KeptImage | null; previous: KeptImage | null }>;
}

export const sha256Hex = (data: Uint8Array | string): string => createHash('sha256').update(data).digest('hex');

export function imagesDir(stateDir: string): string {
  return path.join(stateDir, 'ota', 'images');
}

function indexFile(stateDir: string): string {
  return path.join(imagesDir(stateDir), 'index.json');
}

export function readImageIndex(stateDir: string): ImageIndex {
  try {
    const raw = JSON.parse(fs.readFileSync(indexFile(stateDir), 'utf8')) as ImageIndex;
    if (raw && typeof raw === 'object' && raw.devices && typeof raw.devices === 'object') return raw;
  } catch {
    /* missing or unreadable: no images kept yet */
  }
  return { devices: {} };
}

/** The image a device ran before its current one, with its bytes, or null when none was kept. */
export function previousImage(stateDir: string, deviceId: string): { image: KeptImage; bytes: Buffer } | null {
  const kept = readImageIndex(stateDir).devices[deviceId]?.previous ?? null;
  if (!kept) return null;
  try {
    const bytes = fs.readFileSync(path.join(imagesDir(stateDir), `${kept.sha256}.bin`));
    return sha256Hex(bytes) === kept.sha256 ? { image: kept, bytes } : null;
  } catch {
    return null;
  }
}

// One index writer at a time inside this process (rollouts flash devices in parallel).
let indexQueue: Promise<void> = Promise.resolve();

async function keepImage(stateDir: string, deviceId: string, image: Uint8Array, version: string): Promise<void> {
  const dir = imagesDir(stateDir);
  fs.mkdirSync(dir, { recursive: true });
  const sha = sha256Hex(image);
  const file = path.join(dir, `${sha}.bin`);
  if (!fs.existsSync(file)) {
    // Temp file, fsync, rename, directory fsync: a crash never leaves a torn image under its digest.
    const temp = `${file}.${process.pid}.${Date.now()}.tmp`;
    writeNewFileSync(temp, Buffer.from(image));
    fs.renameSync(temp, file);
    fsyncDir(dir);
  }
  const run = indexQueue.then(async () => {
    const index = readImageIndex(stateDir);
    const entry = index.devices[deviceId] ?? { current: null, previous: null };
    const kept: KeptImage = { version, sha256: sha, size: image.length, flashed_at_ms: Date.now() };
    // Re-flashing the previous image (a rollback) swaps the two, so a second rollback goes forward again.
    if (entry.current?.sha256 !== sha) index.devices[deviceId] = { current: kept, previous: entry.current };
    else index.devices[deviceId] = { current: kept, previous: entry.previous };
    await writeFileDurably(indexFile(stateDir), JSON.stringify(index));
  });
  indexQueue = run.catch(() => undefined);
  await run;
}

export async function flashFirmware(deps: FirmwareFlashDeps, deviceId: string, image: Uint8Array, version: string): Promise<FirmwareFlashResult> {
  const started = Date.now();
  const outcome = await deps.deviceHub.updateFirmware(deviceId, image, version);
  // The device reports the version it runs after the update (the new one, or the old one after a rollback).
  if (outcome.version) deps.devices.update(deviceId, { firmware_version: outcome.version });
  const device = deps.devices.require(deviceId);
  if (outcome.result === 'activated') {
    await keepImage(deps.stateDir, deviceId, image, version);
  } else {
    deps.alerts.raise({
      alert_type: 'recovery_failed',
      severity: 'warning',
      source: 'firmware-update',
      message: `firmware ${version} for ${device.id} was not activated (${outcome.result}): ${outcome.detail}`,
    });
  }
  return { ok: outcome.result === 'activated', device_id: device.id, outcome, firmware_version: device.firmware_version, duration_ms: Date.now() - started };
}
