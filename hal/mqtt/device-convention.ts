/**
 * The svc MQTT device convention (spec: docs/mqtt-devices.md), protocol version 1.
 *
 * Everything here is MQTT 3.1.1: payloads are self-contained (JSON or a bare status word), no MQTT 5
 * properties (user properties, correlation data, response topic, message expiry) are used, so any
 * 3.1.1 broker (mosquitto, aedes, EMQX, HiveMQ, ...) and any 3.1.1 client library can take part.
 *
 * Topics, with the default prefix `svc`:
 *   svc/devices/<id>/discovery   device → all   retained, QoS 1   JSON identity (empty payload = device removed)
 *   svc/devices/<id>/status      device → all   retained, QoS 1   `online` | `offline` (Last Will: `offline`)
 *   svc/devices/<id>/telemetry   device → all   QoS 0             JSON `{ts_ms, readings:{name: value}}`
 *   svc/devices/<id>/heartbeat   device → all   QoS 0             JSON `{ts_ms, uptime_ms, faults[]}`
 *   svc/devices/<id>/command     gateway → dev  QoS 1, never retained   JSON `{id, name, args}`
 *   svc/devices/<id>/ack         device → gw    QoS 1             JSON `{id, status, detail?}`
 *
 * Validation is hand-written (no schema library on the ingest hot path): every function returns either
 * the typed value or a short reason string, never throws on hostile input.
 */

export const PROTOCOL_VERSION = 1 as const;
export const DEFAULT_PREFIX = 'svc';
/** Payloads above this size are rejected before JSON.parse. */
export const MAX_PAYLOAD_BYTES = 64 * 1024;

export const TOPIC_KINDS = ['discovery', 'status', 'telemetry', 'heartbeat', 'command', 'ack'] as const;
export type TopicKind = (typeof TOPIC_KINDS)[number];

/** QoS and retain per topic kind. Retained state (identity, availability) is QoS 1; streams are QoS 0. */
export const TOPIC_QOS: Readonly<Record<TopicKind, { qos: 0 | 1; retain: boolean }>> = {
  discovery: { qos: 1, retain: true },
  status: { qos: 1, retain: true },
  telemetry: { qos: 0, retain: false },
  heartbeat: { qos: 0, retain: false },
  command: { qos: 1, retain: false },
  ack: { qos: 1, retain: false },
};

/** Topics the gateway subscribes to (it never subscribes to `command`, which it publishes itself). */
export const GATEWAY_SUBSCRIBED_KINDS: readonly TopicKind[] = ['discovery', 'status', 'heartbeat', 'telemetry', 'ack'];

// ---------------------------------------------------------------------------------------------------
// Identifiers

/**
 * Device ids are one safe topic segment: 1–64 characters of `A-Z a-z 0-9 _ . -`, starting with a letter
 * or digit. That excludes `/`, the wildcards `+` and `#`, a leading `$` (broker-internal topics), NUL,
 * whitespace and `.`/`..`, and keeps the id usable unescaped in URLs and file names.
 */
export const DEVICE_ID_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
/** Metric and command names: identifier-like, 1–64 characters. */
export const NAME_RE = /^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/;
/** Command ids chosen by the gateway (or any controller): 1–64 characters of `A-Z a-z 0-9 _ . : -`. */
export const COMMAND_ID_RE = /^[A-Za-z0-9_.:-]{1,64}$/;
/** One prefix level: no wildcards, no `/`, no NUL, not empty. */
const PREFIX_LEVEL_RE = /^[^/+#\u0000]+$/;

export function isValidDeviceId(id: unknown): id is string {
  return typeof id === 'string' && DEVICE_ID_RE.test(id);
}

/** Throws a RangeError naming the rule when `id` is not a valid device id. */
export function assertDeviceId(id: string): void {
  if (!isValidDeviceId(id)) {
    throw new RangeError(`invalid device id ${JSON.stringify(id)}: 1-64 of [A-Za-z0-9_.-], starting with a letter or digit`);
  }
}

/** A prefix is one or more `/`-separated levels without wildcards, not starting with `$`. */
export function assertPrefix(prefix: string): void {
  const ok =
    prefix.length > 0 &&
    prefix.length <= 128 &&
    !prefix.startsWith('$') &&
    prefix.split('/').every((level) => PREFIX_LEVEL_RE.test(level));
  if (!ok) throw new RangeError(`invalid topic prefix ${JSON.stringify(prefix)}: non-empty levels, no + # or leading $`);
}

// ---------------------------------------------------------------------------------------------------
// Topics

export function deviceTopic(prefix: string, deviceId: string, kind: TopicKind): string {
  assertDeviceId(deviceId);
  return `${prefix}/devices/${deviceId}/${kind}`;
}

/** Builds all topics of one device. */
export function deviceTopics(prefix: string, deviceId: string): Record<TopicKind, string> {
  assertDeviceId(deviceId);
  const base = `${prefix}/devices/${deviceId}`;
  return {
    discovery: `${base}/discovery`,
    status: `${base}/status`,
    telemetry: `${base}/telemetry`,
    heartbeat: `${base}/heartbeat`,
    command: `${base}/command`,
    ack: `${base}/ack`,
  };
}

/** Subscription filter for one kind across all devices: `<prefix>/devices/+/<kind>`. */
export function kindFilter(prefix: string, kind: TopicKind): string {
  return `${prefix}/devices/+/${kind}`;
}

export interface ParsedTopic {
  deviceId: string;
  kind: TopicKind;
}

/** Parses `<prefix>/devices/<id>/<kind>`; null for anything else (other prefix, bad id, unknown kind, extra levels). */
export function parseDeviceTopic(prefix: string, topic: string): ParsedTopic | null {
  const head = `${prefix}/devices/`;
  if (!topic.startsWith(head)) return null;
  const rest = topic.slice(head.length);
  const slash = rest.indexOf('/');
  if (slash <= 0) return null;
  const deviceId = rest.slice(0, slash);
  const kind = rest.slice(slash + 1);
  if (!isValidDeviceId(deviceId)) return null;
  if (!(TOPIC_KINDS as readonly string[]).includes(kind)) return null;
  return { deviceId, kind: kind as TopicKind };
}

// ---------------------------------------------------------------------------------------------------
// Payload types

export type MetricType = 'number' | 'integer' | 'boolean' | 'string';
export const METRIC_TYPES: readonly MetricType[] = ['number', 'integer', 'boolean', 'string'];

export interface MetricSpec {
  name: string;
  /** Unit symbol (UCUM/SI style: `degC`, `V`, `A`, `%`, `rpm`); empty string when dimensionless. */
  unit: string;
  type: MetricType;
}

export interface DeviceIdentity {
  id: string;
  device_type: string;
  firmware_version: string;
  hardware_revision: string;
  serial: string;
  capabilities: string[];
  metrics: MetricSpec[];
  commands: string[];
  protocol_version: typeof PROTOCOL_VERSION;
}

export type DeviceStatus = 'online' | 'offline';
export type ReadingValue = number | boolean | string;
export type Readings = Record<string, ReadingValue>;

export interface TelemetryPayload {
  ts_ms: number;
  readings: Readings;
}

export interface HeartbeatPayload {
  ts_ms: number;
  uptime_ms: number;
  /** Active fault flags, e.g. `["overtemp", "sensor_timeout"]`; empty when healthy. */
  faults: string[];
}

export type CommandArgs = Record<string, unknown>;

export interface CommandPayload {
  id: string;
  name: string;
  args: CommandArgs;
}

/** `ok`: executed; `rejected`: refused without acting (unknown command, bad args, busy); `error`: attempted and failed. */
export type AckStatus = 'ok' | 'rejected' | 'error';
export const ACK_STATUSES: readonly AckStatus[] = ['ok', 'rejected', 'error'];

export interface AckPayload {
  id: string;
  status: AckStatus;
  detail?: string;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; reason: string };

// ---------------------------------------------------------------------------------------------------
// Validation helpers

const MAX_STRING = 256;
const MAX_LIST = 256;

function fail<T>(reason: string): Parsed<T> {
  return { ok: false, reason };
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Unknown keys are refused, except vendor extensions named `x_*`, which are ignored. */
function unknownKey(obj: Record<string, unknown>, allowed: readonly string[]): string | null {
  for (const key of Object.keys(obj)) {
    if (!allowed.includes(key) && !key.startsWith('x_')) return key;
  }
  return null;
}

function isShortString(v: unknown, max = MAX_STRING): v is string {
  return typeof v === 'string' && v.length <= max;
}

function isTimestamp(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

function isStringList(v: unknown, itemRe: RegExp): v is string[] {
  return Array.isArray(v) && v.length <= MAX_LIST && v.every((s) => typeof s === 'string' && itemRe.test(s));
}

/** Decodes a payload to JSON with a size cap; returns a reason instead of throwing. */
export function decodeJson(payload: Uint8Array | string): Parsed<unknown> {
  const size = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.byteLength;
  if (size === 0) return fail('empty payload');
  if (size > MAX_PAYLOAD_BYTES) return fail(`payload of ${size} bytes exceeds ${MAX_PAYLOAD_BYTES}`);
  const text = typeof payload === 'string' ? payload : Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString('utf8');
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return fail('invalid JSON');
  }
}

export function encodeJson(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value));
}

// ---------------------------------------------------------------------------------------------------
// Validators (object in, typed value or reason out)

const TOKEN_RE = /^[A-Za-z0-9_.:+-]{1,64}$/;
const IDENTITY_KEYS = ['id', 'device_type', 'firmware_version', 'hardware_revision', 'serial', 'capabilities', 'metrics', 'commands', 'protocol_version'] as const;

export function validateIdentity(v: unknown): Parsed<DeviceIdentity> {
  if (!isPlainObject(v)) return fail('discovery: not a JSON object');
  const extra = unknownKey(v, IDENTITY_KEYS);
  if (extra) return fail(`discovery: unknown field ${JSON.stringify(extra)}`);
  if (v['protocol_version'] !== PROTOCOL_VERSION) return fail(`discovery: protocol_version must be ${PROTOCOL_VERSION}`);
  if (!isValidDeviceId(v['id'])) return fail('discovery: invalid id');
  for (const key of ['device_type', 'firmware_version', 'hardware_revision', 'serial'] as const) {
    const s = v[key];
    if (!isShortString(s, 128)) return fail(`discovery: ${key} must be a string of at most 128 characters`);
  }
  if ((v['device_type'] as string).length === 0) return fail('discovery: device_type must not be empty');
  if (!isStringList(v['capabilities'], TOKEN_RE)) return fail('discovery: capabilities must be a list of tokens');
  if (!isStringList(v['commands'], NAME_RE)) return fail('discovery: commands must be a list of names');
  const metricsIn = v['metrics'];
  if (!Array.isArray(metricsIn) || metricsIn.length > MAX_LIST) return fail('discovery: metrics must be a list');
  const metrics: MetricSpec[] = [];
  const seen = new Set<string>();
  for (const m of metricsIn) {
    if (!isPlainObject(m)) return fail('discovery: metric must be an object');
    const mExtra = unknownKey(m, ['name', 'unit', 'type']);
    if (mExtra) return fail(`discovery: metric has unknown field ${JSON.stringify(mExtra)}`);
    const { name, unit, type } = m;
    if (typeof name !== 'string' || !NAME_RE.test(name)) return fail('discovery: invalid metric name');
    if (seen.has(name)) return fail(`discovery: duplicate metric ${name}`);
    seen.add(name);
    if (!isShortString(unit, 32)) return fail(`discovery: metric ${name} unit must be a string of at most 32 characters`);
    if (!(METRIC_TYPES as readonly unknown[]).includes(type)) return fail(`discovery: metric ${name} type must be one of ${METRIC_TYPES.join(', ')}`);
    metrics.push({ name, unit, type: type as MetricType });
  }
  return {
    ok: true,
    value: {
      id: v['id'],
      device_type: v['device_type'] as string,
      firmware_version: v['firmware_version'] as string,
      hardware_revision: v['hardware_revision'] as string,
      serial: v['serial'] as string,
      capabilities: [...(v['capabilities'] as string[])],
      metrics,
      commands: [...(v['commands'] as string[])],
      protocol_version: PROTOCOL_VERSION,
    },
  };
}

/** Status payloads are the bare words `online` / `offline` (not JSON), like Home Assistant availability. */
export function parseStatus(payload: Uint8Array | string): Parsed<DeviceStatus> {
  if (payload.length > 16) return fail('status: payload must be "online" or "offline"');
  const text = (typeof payload === 'string' ? payload : Buffer.from(payload).toString('utf8')).trim();
  if (text === 'online' || text === 'offline') return { ok: true, value: text };
  return fail('status: payload must be "online" or "offline"');
}

function isReadingValue(v: unknown): v is ReadingValue {
  return (typeof v === 'number' && Number.isFinite(v)) || typeof v === 'boolean' || isShortString(v);
}

export function validateTelemetry(v: unknown): Parsed<TelemetryPayload> {
  if (!isPlainObject(v)) return fail('telemetry: not a JSON object');
  const extra = unknownKey(v, ['ts_ms', 'readings']);
  if (extra) return fail(`telemetry: unknown field ${JSON.stringify(extra)}`);
  if (!isTimestamp(v['ts_ms'])) return fail('telemetry: ts_ms must be a non-negative integer');
  const readings = v['readings'];
  if (!isPlainObject(readings)) return fail('telemetry: readings must be an object');
  const names = Object.keys(readings);
  if (names.length === 0) return fail('telemetry: readings must not be empty');
  if (names.length > MAX_LIST) return fail('telemetry: too many readings');
  for (const name of names) {
    if (!NAME_RE.test(name)) return fail(`telemetry: invalid metric name ${JSON.stringify(name.slice(0, 64))}`);
    if (!isReadingValue(readings[name])) return fail(`telemetry: ${name} must be a finite number, boolean or short string`);
  }
  return { ok: true, value: { ts_ms: v['ts_ms'], readings: readings as Readings } };
}

/** Does `value` fit the declared metric type? */
export function matchesMetricType(value: ReadingValue, type: MetricType): boolean {
  switch (type) {
    case 'number':
      return typeof value === 'number';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'string':
      return typeof value === 'string';
  }
}

export function validateHeartbeat(v: unknown): Parsed<HeartbeatPayload> {
  if (!isPlainObject(v)) return fail('heartbeat: not a JSON object');
  const extra = unknownKey(v, ['ts_ms', 'uptime_ms', 'faults']);
  if (extra) return fail(`heartbeat: unknown field ${JSON.stringify(extra)}`);
  if (!isTimestamp(v['ts_ms'])) return fail('heartbeat: ts_ms must be a non-negative integer');
  if (!isTimestamp(v['uptime_ms'])) return fail('heartbeat: uptime_ms must be a non-negative integer');
  if (!isStringList(v['faults'], TOKEN_RE)) return fail('heartbeat: faults must be a list of tokens');
  return { ok: true, value: { ts_ms: v['ts_ms'], uptime_ms: v['uptime_ms'], faults: [...v['faults']] } };
}

export function validateCommand(v: unknown): Parsed<CommandPayload> {
  if (!isPlainObject(v)) return fail('command: not a JSON object');
  const extra = unknownKey(v, ['id', 'name', 'args']);
  if (extra) return fail(`command: unknown field ${JSON.stringify(extra)}`);
  const { id, name } = v;
  if (typeof id !== 'string' || !COMMAND_ID_RE.test(id)) return fail('command: invalid id');
  if (typeof name !== 'string' || !NAME_RE.test(name)) return fail('command: invalid name');
  const args = v['args'] ?? {};
  if (!isPlainObject(args)) return fail('command: args must be an object');
  return { ok: true, value: { id, name, args } };
}

export function validateAck(v: unknown): Parsed<AckPayload> {
  if (!isPlainObject(v)) return fail('ack: not a JSON object');
  const extra = unknownKey(v, ['id', 'status', 'detail']);
  if (extra) return fail(`ack: unknown field ${JSON.stringify(extra)}`);
  const { id, status, detail } = v;
  if (typeof id !== 'string' || !COMMAND_ID_RE.test(id)) return fail('ack: invalid id');
  if (!(ACK_STATUSES as readonly unknown[]).includes(status)) return fail(`ack: status must be one of ${ACK_STATUSES.join(', ')}`);
  if (detail !== undefined && !isShortString(detail, 1024)) return fail('ack: detail must be a string of at most 1024 characters');
  const value: AckPayload = { id, status: status as AckStatus };
  if (detail !== undefined) value.detail = detail;
  return { ok: true, value };
}

/** Decode + validate in one step, for payloads read off the wire. */
export function parsePayload<T>(payload: Uint8Array | string, validate: (v: unknown) => Parsed<T>): Parsed<T> {
  const json = decodeJson(payload);
  return json.ok ? validate(json.value) : json;
}
