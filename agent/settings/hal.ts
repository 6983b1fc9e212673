import type { ResolvedConfig } from '../project/resolve-config.js';
import { SettingsError } from './errors.js';

/**
 * Where the HAL looks for devices: `[hal]` in svc.toml, each key overridable by its `SVC_HAL_*`
 * variable (docs/configuration.md § HAL). The variables are parsed by `loadSettings` with the rest
 * of the environment; `resolveHalSettings` lays them over the project's `[hal]` table. The HAL
 * itself (`hal/`) never reads either: it receives the resolved values as plain options.
 */
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

/** The `SVC_HAL_*` variables as set (null when unset or blank), already checked. */
export type HalOverrides = { [K in keyof HalSettings]: HalSettings[K] | null };

/** The one place the HAL defaults and lower bounds are written. */
export const HAL_DEFAULTS = { mqttPrefix: 'svc', offlineAfterMs: 5000, serialBaudRate: 115200, canBitrate: 500000 } as const;
const HAL_INTEGERS = {
  offlineAfterMs: { variable: 'SVC_HAL_OFFLINE_AFTER_MS', key: 'offline_after_ms', min: 100 },
  serialBaudRate: { variable: 'SVC_HAL_SERIAL_BAUD', key: 'serial_baud', min: 300 },
  canBitrate: { variable: 'SVC_HAL_CAN_BITRATE', key: 'can_bitrate', min: 10000 },
} as const;
const HAL_LISTS = {
  serialPorts: { variable: 'SVC_HAL_SERIAL_PORTS', key: 'serial_ports' },
  slcanPorts: { variable: 'SVC_HAL_SLCAN_PORTS', key: 'slcan_ports' },
  canInterfaces: { variable: 'SVC_HAL_CAN_INTERFACES', key: 'can_interfaces' },
} as const;

const LIST_SPLIT = /[,\s]+/;
type Env = Record<string, string | undefined>;

function listFromConfig(cfg: unknown): string[] {
  if (Array.isArray(cfg)) return cfg.filter((x): x is string => typeof x === 'string' && x !== '');
  if (typeof cfg === 'string' && cfg !== '') return cfg.split(LIST_SPLIT).filter(Boolean);
  return [];
}

function wholeNumber(name: string, raw: unknown, min: number): number {
  const n = typeof raw === 'number' ? raw : /^\d+$/.test(String(raw)) ? Number(raw) : NaN;
  if (!Number.isInteger(n) || n < min) throw new SettingsError(name, `expected a whole number >= ${min}, got '${String(raw)}'`);
  return n;
}

function checkMqttUrl(url: string): string {
  if (!/^(mqtts?|wss?|tcp):\/\//.test(url)) throw new SettingsError('SVC_HAL_MQTT_URL', `expected an mqtt:// or mqtts:// URL, got '${url}'`);
  return url;
}

const set = (env: Env, name: string): string | null => (env[name] !== undefined && env[name]!.trim() !== '' ? env[name]!.trim() : null);

/** Parses the `SVC_HAL_*` variables (called by `loadSettings`). */
export function parseHalEnv(env: Env): HalOverrides {
  const ints = Object.fromEntries(
    Object.entries(HAL_INTEGERS).map(([k, d]) => {
      const raw = set(env, d.variable);
      return [k, raw === null ? null : wholeNumber(d.variable, raw, d.min)];
    }),
  ) as Pick<HalOverrides, keyof typeof HAL_INTEGERS>;
  const lists = Object.fromEntries(
    Object.entries(HAL_LISTS).map(([k, d]) => [k, set(env, d.variable)?.split(LIST_SPLIT).filter(Boolean) ?? null]),
  ) as Pick<HalOverrides, keyof typeof HAL_LISTS>;
  const mqttUrl = set(env, 'SVC_HAL_MQTT_URL');
  return { ...ints, ...lists, mqttUrl: mqttUrl === null ? null : checkMqttUrl(mqttUrl), mqttPrefix: set(env, 'SVC_HAL_MQTT_PREFIX') };
}

/** The variables over the project's `[hal]` table over `HAL_DEFAULTS`; a bad table value names its variable. */
export function resolveHalSettings(overrides: HalOverrides, config: ResolvedConfig | null): HalSettings {
  const hal = (config?.tree['hal'] ?? {}) as Record<string, unknown>;
  const str = (key: string): string | null => (typeof hal[key] === 'string' && hal[key] !== '' ? (hal[key] as string) : null);
  const int = (k: keyof typeof HAL_INTEGERS): number => {
    if (overrides[k] !== null) return overrides[k]!;
    const raw = hal[HAL_INTEGERS[k].key];
    return raw === undefined || raw === null || raw === '' ? HAL_DEFAULTS[k] : wholeNumber(HAL_INTEGERS[k].variable, raw, HAL_INTEGERS[k].min);
  };
  const list = (k: keyof typeof HAL_LISTS): string[] => overrides[k] ?? listFromConfig(hal[HAL_LISTS[k].key]);
  const configUrl = str('mqtt_url');
  return {
    serialPorts: list('serialPorts'),
    slcanPorts: list('slcanPorts'),
    canInterfaces: list('canInterfaces'),
    mqttUrl: overrides.mqttUrl ?? (configUrl === null ? null : checkMqttUrl(configUrl)),
    mqttPrefix: overrides.mqttPrefix ?? str('mqtt_prefix') ?? HAL_DEFAULTS.mqttPrefix,
    offlineAfterMs: int('offlineAfterMs'),
    serialBaudRate: int('serialBaudRate'),
    canBitrate: int('canBitrate'),
  };
}
