import { describe, expect, it } from 'vitest';
import {
  MAX_PAYLOAD_BYTES,
  TOPIC_QOS,
  assertPrefix,
  deviceTopic,
  deviceTopics,
  isValidDeviceId,
  kindFilter,
  matchesMetricType,
  parseDeviceTopic,
  parsePayload,
  parseStatus,
  validateAck,
  validateCommand,
  validateHeartbeat,
  validateIdentity,
  validateTelemetry,
} from '../../hal/mqtt/device-convention.js';
import { MqttLink, parseMqttUrl } from '../../hal/mqtt/mqtt-link.js';
import { freePort } from '../helpers/mosquitto.js';

const identity = {
  id: 'arm-1',
  device_type: 'motor-controller',
  firmware_version: '2.4.1',
  hardware_revision: 'B',
  serial: 'SN1',
  capabilities: ['telemetry'],
  metrics: [{ name: 'temperature', unit: 'degC', type: 'number' }],
  commands: ['ping'],
  protocol_version: 1,
};

describe('MQTT device convention: ids and topics', () => {
  it('accepts safe topic segments and refuses everything else', () => {
    for (const ok of ['a', 'arm-1', 'ARM_2.left', '0', 'x'.repeat(64)]) expect(isValidDeviceId(ok), ok).toBe(true);
    for (const bad of ['', 'a/b', '+', '#', 'a+b', '$SYS', '.', '..', '-lead', '_lead', 'sp ace', 'x'.repeat(65), 'é', 'a\u0000b'])
      expect(isValidDeviceId(bad), JSON.stringify(bad)).toBe(false);
  });

  it('builds and parses topics', () => {
    expect(deviceTopic('svc', 'arm-1', 'discovery')).toBe('svc/devices/arm-1/discovery');
    expect(deviceTopics('site/a', 'arm-1').command).toBe('site/a/devices/arm-1/command');
    expect(kindFilter('svc', 'telemetry')).toBe('svc/devices/+/telemetry');
    expect(parseDeviceTopic('svc', 'svc/devices/arm-1/ack')).toEqual({ deviceId: 'arm-1', kind: 'ack' });
    expect(parseDeviceTopic('site/a', 'site/a/devices/x/status')).toEqual({ deviceId: 'x', kind: 'status' });
    for (const t of ['svc/devices/arm-1', 'svc/devices//ack', 'svc/devices/arm-1/ack/extra', 'svc/devices/arm-1/unknown', 'other/devices/a/ack', 'svc/devices/$x/ack'])
      expect(parseDeviceTopic('svc', t), t).toBeNull();
    expect(() => deviceTopic('svc', 'a/b', 'ack')).toThrow(RangeError);
  });

  it('validates prefixes', () => {
    expect(() => assertPrefix('svc')).not.toThrow();
    expect(() => assertPrefix('plant/line-1')).not.toThrow();
    for (const bad of ['', '$SYS', 'a/+', 'a/#', 'a//b', '/a']) expect(() => assertPrefix(bad), bad).toThrow(RangeError);
  });

  it('QoS and retain are MQTT 3.1.1 only and as documented', () => {
    expect(TOPIC_QOS).toEqual({
      discovery: { qos: 1, retain: true },
      status: { qos: 1, retain: true },
      telemetry: { qos: 0, retain: false },
      heartbeat: { qos: 0, retain: false },
      command: { qos: 1, retain: false },
      ack: { qos: 1, retain: false },
    });
  });
});

describe('MQTT device convention: payloads', () => {
  it('identity: valid, unknown fields refused, x_ extensions ignored', () => {
    const r = validateIdentity(identity);
    expect(r).toEqual({ ok: true, value: identity });
    expect(validateIdentity({ ...identity, x_vendor: { anything: 1 } }).ok).toBe(true);
    expect(validateIdentity({ ...identity, colour: 'red' })).toMatchObject({ ok: false, reason: expect.stringContaining('colour') });
    expect(validateIdentity({ ...identity, protocol_version: 2 }).ok).toBe(false);
    expect(validateIdentity({ ...identity, id: 'a/b' }).ok).toBe(false);
    expect(validateIdentity({ ...identity, device_type: '' }).ok).toBe(false);
    expect(validateIdentity({ ...identity, metrics: [{ name: 't', unit: 'C', type: 'float' }] }).ok).toBe(false);
    expect(validateIdentity({ ...identity, metrics: [{ name: 't', unit: 'C', type: 'number' }, { name: 't', unit: 'C', type: 'number' }] }).ok).toBe(false);
    expect(validateIdentity({ ...identity, capabilities: 'telemetry' }).ok).toBe(false);
    expect(validateIdentity([identity]).ok).toBe(false);
  });

  it('telemetry, heartbeat, command, ack', () => {
    expect(validateTelemetry({ ts_ms: 1, readings: { t: 1.5, on: true, mode: 'auto' } }).ok).toBe(true);
    expect(validateTelemetry({ ts_ms: 1, readings: {} }).ok).toBe(false);
    expect(validateTelemetry({ ts_ms: 1.5, readings: { t: 1 } }).ok).toBe(false);
    expect(validateTelemetry({ ts_ms: 1, readings: { t: null } }).ok).toBe(false);
    expect(validateTelemetry({ ts_ms: 1, readings: { 'a b': 1 } }).ok).toBe(false);
    expect(validateTelemetry({ readings: { t: 1 } }).ok).toBe(false);

    expect(validateHeartbeat({ ts_ms: 1, uptime_ms: 2, faults: ['overtemp'] }).ok).toBe(true);
    expect(validateHeartbeat({ ts_ms: 1, uptime_ms: 2, faults: [1] }).ok).toBe(false);

    expect(validateCommand({ id: 'c-1', name: 'set_speed' })).toEqual({ ok: true, value: { id: 'c-1', name: 'set_speed', args: {} } });
    expect(validateCommand({ id: 'c-1', name: 'set_speed', args: [1] }).ok).toBe(false);
    expect(validateCommand({ id: '', name: 'x' }).ok).toBe(false);

    expect(validateAck({ id: 'c-1', status: 'ok' })).toEqual({ ok: true, value: { id: 'c-1', status: 'ok' } });
    expect(validateAck({ id: 'c-1', status: 'error', detail: 'stalled' }).ok).toBe(true);
    expect(validateAck({ id: 'c-1', status: 'done' }).ok).toBe(false);
    expect(validateAck({ id: 'c-1', status: 'ok', detail: 5 }).ok).toBe(false);
  });

  it('status words, JSON decoding limits, metric types', () => {
    expect(parseStatus(Buffer.from('online'))).toEqual({ ok: true, value: 'online' });
    expect(parseStatus('offline')).toEqual({ ok: true, value: 'offline' });
    expect(parseStatus('"online"').ok).toBe(false);
    expect(parsePayload('{bad', validateAck)).toEqual({ ok: false, reason: 'invalid JSON' });
    expect(parsePayload('', validateAck)).toEqual({ ok: false, reason: 'empty payload' });
    expect(parsePayload(Buffer.alloc(MAX_PAYLOAD_BYTES + 1, 0x20), validateAck).ok).toBe(false);
    expect(matchesMetricType(3, 'integer')).toBe(true);
    expect(matchesMetricType(3.5, 'integer')).toBe(false);
    expect(matchesMetricType('x', 'number')).toBe(false);
    expect(matchesMetricType(false, 'boolean')).toBe(true);
  });
});

describe('MqttLink without a broker', () => {
  it('parses URLs and refuses unsupported schemes', () => {
    expect(parseMqttUrl('mqtt://127.0.0.1:1884')).toEqual({ secure: false, host: '127.0.0.1', port: 1884 });
    expect(parseMqttUrl('mqtts://u:p%40ss@broker.local')).toEqual({ secure: true, host: 'broker.local', port: 8883, username: 'u', password: 'p@ss' });
    expect(parseMqttUrl('tcp://[::1]:1883').host).toBe('::1');
    expect(() => parseMqttUrl('ws://x')).toThrow(/unsupported/);
    expect(() => parseMqttUrl('not a url')).toThrow(/invalid/);
  });

  it('keeps retrying with backoff, queues (bounded) while offline, and closes cleanly', async () => {
    const port = await freePort();
    const link = new MqttLink({ url: `mqtt://127.0.0.1:${port}`, backoffBaseMs: 20, backoffMaxMs: 40, queueCapacity: 3 });
    const states: string[] = [];
    link.on('state', (to) => states.push(to));
    link.on('error', () => {});
    link.start();
    const deadline = Date.now() + 3000;
    while (link.stats().reconnects < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    for (let i = 0; i < 5; i++) expect(link.publish('t/x', `m${i}`)).toBe('queued');
    const s = link.stats();
    expect(s.reconnects).toBeGreaterThanOrEqual(3);
    expect(s.last_error).toMatch(/ECONNREFUSED/);
    expect(s).toMatchObject({ queued: 3, dropped_out: 2, messages_out: 0 });
    expect(states.slice(0, 3)).toEqual(['connecting', 'backoff', 'connecting']);
    expect(() => link.publish('t/+', 'x')).toThrow(RangeError);
    await link.close();
    expect(link.state).toBe('closed');
    expect(link.publish('t/x', 'late')).toBe('closed');
    await expect(link.whenOpen(100)).rejects.toThrow(/closed/);
    // No timer left behind: nothing changes after close.
    const before = link.stats().reconnects;
    await new Promise((r) => setTimeout(r, 100));
    expect(link.stats().reconnects).toBe(before);
  });
});
