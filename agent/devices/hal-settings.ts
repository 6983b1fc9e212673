import type { ResolvedConfig } from '../project/resolve-config.js';
import { SettingsError } from '../settings/settings.js';

/** Where the HAL looks for devices: `[hal]` in svc.toml, each key overridable by its `SVC_HAL_*` variable. */
export interface HalSettings {
  /** Paths or globs (`/dev/ttyUSB*`) of serial lines speaking the firmware bridge protocol. */
  serialPorts: string[];
  /** Paths or globs of SLCAN (Lawicel) USB-CAN adapters. */
  slcanPorts: string[];
  /** SocketCAN interfaces (`can0`, `vcan0`). */
  canInterfaces: string[];
  mqttUrl: string | null;
  mqttPrefix: string;
  /** A device not heard from for this long is offline; at half of it, degraded. */
  offlineAfterMs: number;
  serialBaudRate: number;
  canBitrate: number;
}

const LIST_SPLIT = /[,\s]+/;

function list(env: string | undefined, cfg: unknown): string[] {
  if (env !== undefined && env.trim() !== '') return env.split(LIST_SPLIT).filter(Boolean);
  if (Array.isArray(cfg)) return cfg.filter((x): x is string => typeof x === 'string' && x !== '');
  if (typeof cfg === 'string' && cfg !== '') return cfg.split(LIST_SPLIT).filter(Boolean);
  return [];
}

function int(name: string, env: string | undefined, cfg: unknown, fallback: number, min: number): number {
  const raw = env !== undefined && env.trim() !== '' ? env.trim() : cfg;
  if (raw === undefined || raw === null || raw === '') return fallback;
  const n = typeof raw === 'number' ? raw : /^\d+$/.test(String(raw)) ? Number(raw) : NaN;
  if (!Number.isInteger(n) || n < min) throw new SettingsError(name, `expected a whole number >= ${min}, got '${String(raw)}'`);
  return n;
}

export function loadHalSettings(env: Record<string, string | undefined>, config: ResolvedConfig | null): HalSettings {
  const hal = (config?.tree['hal'] ?? {}) as Record<string, unknown>;
  const mqttUrl = env['SVC_HAL_MQTT_URL']?.trim() || (typeof hal['mqtt_url'] === 'string' ? hal['mqtt_url'] : '') || null;
  if (mqttUrl && !/^(mqtts?|wss?|tcp):\/\//.test(mqttUrl)) throw new SettingsError('SVC_HAL_MQTT_URL', `expected an mqtt:// or mqtts:// URL, got '${mqttUrl}'`);
  return {
    serialPorts: list(env['SVC_HAL_SERIAL_PORTS'], hal['serial_ports']),
    slcanPorts: list(env['SVC_HAL_SLCAN_PORTS'], hal['slcan_ports']),
    canInterfaces: list(env['SVC_HAL_CAN_INTERFACES'], hal['can_interfaces']),
    mqttUrl,
    mqttPrefix: (env['SVC_HAL_MQTT_PREFIX']?.trim() || (typeof hal['mqtt_prefix'] === 'string' ? hal['mqtt_prefix'] : '') || 'svc'),
    offlineAfterMs: int('SVC_HAL_OFFLINE_AFTER_MS', env['SVC_HAL_OFFLINE_AFTER_MS'], hal['offline_after_ms'], 5000, 100),
    serialBaudRate: int('SVC_HAL_SERIAL_BAUD', env['SVC_HAL_SERIAL_BAUD'], hal['serial_baud'], 115200, 300),
    canBitrate: int('SVC_HAL_CAN_BITRATE', env['SVC_HAL_CAN_BITRATE'], hal['can_bitrate'], 500000, 10000),
  };
}
