import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startAgent, type RunningAgent } from '../helpers/agent-harness.js';
import { HAL_DEFAULTS, loadSettings, resolveHalSettings, SettingsError } from '../../agent/settings/settings.js';
import type { ResolvedConfig } from '../../agent/project/resolve-config.js';

const ROOT = path.resolve(__dirname, '../..');
const AGENT = path.join(ROOT, 'agent');
const SETTINGS = path.join(AGENT, 'settings');

function tsFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return tsFiles(p);
    return e.name.endsWith('.ts') ? [p] : [];
  });
}

// Every SVC_* variable is parsed once, in agent/settings, and handed on as parameters
// (docs/configuration.md § Environment variables). A file that reads the environment itself
// escapes the "bad value stops the start naming the variable" rule and grows a second default.
describe('agent/settings is the only reader of the environment', () => {
  it('no file under agent/ outside agent/settings mentions process.env or reads an SVC_ name from an env object', () => {
    const offenders: string[] = [];
    for (const file of tsFiles(AGENT)) {
      if (file.startsWith(SETTINGS + path.sep)) continue;
      const text = fs.readFileSync(file, 'utf8');
      text.split('\n').forEach((line, i) => {
        const where = `${path.relative(ROOT, file)}:${i + 1}: ${line.trim()}`;
        if (line.includes('process.env')) offenders.push(where);
        // env['SVC_X'], env["SVC_X"], env.SVC_X, and destructuring `{ SVC_X } = env`.
        else if (/\[\s*['"`]SVC_[A-Z0-9_]+['"`]\s*\]/.test(line) || /\.SVC_[A-Z0-9_]+/.test(line) || /\{[^}]*\bSVC_[A-Z0-9_]+\b[^}]*\}\s*=/.test(line)) {
          offenders.push(where);
        }
      });
    }
    expect(offenders).toEqual([]);
  });

  it('docs/configuration.md lists every SVC_ variable agent/settings reads', () => {
    const doc = fs.readFileSync(path.join(ROOT, 'docs/configuration.md'), 'utf8');
    const names = new Set(tsFiles(SETTINGS).flatMap((f) => fs.readFileSync(f, 'utf8').match(/SVC_[A-Z0-9_]*[A-Z0-9]\b/g) ?? []));
    expect(names.size).toBeGreaterThan(30);
    expect([...names].filter((n) => !new RegExp(`\`${n}\``).test(doc))).toEqual([]);
  });
});

describe('HAL and decision settings parsed by loadSettings', () => {
  const config = (hal: Record<string, unknown>) => ({ tree: { hal } }) as unknown as ResolvedConfig;

  it('SVC_HAL_* override [hal] key by key; unset keys fall back to the table, then to HAL_DEFAULTS', () => {
    const s = loadSettings({ SVC_HAL_SERIAL_PORTS: '/dev/ttyA, /dev/ttyB', SVC_HAL_OFFLINE_AFTER_MS: ' 750 ' }, '/');
    expect(resolveHalSettings(s.hal, config({ serial_ports: ['/dev/ttyZ'], slcan_ports: '/dev/slcan0', can_bitrate: 250000, mqtt_url: 'mqtt://broker:1883' }))).toEqual({
      serialPorts: ['/dev/ttyA', '/dev/ttyB'],
      slcanPorts: ['/dev/slcan0'],
      canInterfaces: [],
      mqttUrl: 'mqtt://broker:1883',
      mqttPrefix: HAL_DEFAULTS.mqttPrefix,
      offlineAfterMs: 750,
      serialBaudRate: HAL_DEFAULTS.serialBaudRate,
      canBitrate: 250000,
    });
    expect(resolveHalSettings(loadSettings({}, '/').hal, null)).toMatchObject({ ...HAL_DEFAULTS, mqttUrl: null, serialPorts: [] });
  });

  it('a HAL value that does not parse stops the start naming the variable, from the environment or the table', () => {
    expect(() => loadSettings({ SVC_HAL_OFFLINE_AFTER_MS: '5s' }, '/')).toThrow(new SettingsError('SVC_HAL_OFFLINE_AFTER_MS', "expected a whole number >= 100, got '5s'"));
    expect(() => loadSettings({ SVC_HAL_SERIAL_BAUD: '200' }, '/')).toThrow(/^SVC_HAL_SERIAL_BAUD: expected a whole number >= 300, got '200'$/);
    expect(() => loadSettings({ SVC_HAL_MQTT_URL: 'http://broker' }, '/')).toThrow("SVC_HAL_MQTT_URL: expected an mqtt:// or mqtts:// URL, got 'http://broker'");
    const hal = loadSettings({}, '/').hal;
    expect(() => resolveHalSettings(hal, config({ can_bitrate: 'fast' }))).toThrow("SVC_HAL_CAN_BITRATE: expected a whole number >= 10000, got 'fast'");
    expect(() => resolveHalSettings(hal, config({ mqtt_url: 'ftp://x' }))).toThrow(/^SVC_HAL_MQTT_URL: /);
  });

  it('SVC_DECISION_TRACE and SVC_DECISION_POLICY_SIGNING_KEY, and the CLI URL', () => {
    expect(loadSettings({}, '/')).toMatchObject({ decisions: { trace: false, policySigningKey: null }, controlCenterUrl: null });
    for (const on of ['1', 'TRUE', ' yes ', 'On']) expect(loadSettings({ SVC_DECISION_TRACE: on }, '/').decisions.trace).toBe(true);
    expect(loadSettings({ SVC_DECISION_TRACE: 'off' }, '/').decisions.trace).toBe(false);
    expect(loadSettings({ SVC_DECISION_POLICY_SIGNING_KEY: 'k1', SVC_CONTROL_CENTER_URL: 'http://127.0.0.1:8080' }, '/')).toMatchObject({
      decisions: { policySigningKey: 'k1' },
      controlCenterUrl: 'http://127.0.0.1:8080',
    });
  });
});

// Regression: the program runtime read SVC_DECISION_TRACE from process.env, so an agent started with
// its own environment (Agent.create({ env })) simulated with the test process's value instead.
describe('the agent hands its decision settings to program runs', () => {
  const DEMO = path.join(ROOT, 'demo');
  let running: RunningAgent[] = [];
  afterEach(async () => {
    await Promise.all(running.map((a) => a.close()));
    running = [];
  });
  const simulate = async (env: Record<string, string>) => {
    const a = await startAgent({ env, configPath: path.join(DEMO, 'svc.toml'), programPath: path.join(DEMO, 'programs/patrol.sd') });
    running.push(a);
    const r = await a.json('/v1/programs/simulation', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ execute: true }) });
    expect(r.status).toBe(200);
    return r.body.simulation;
  };

  it('SVC_DECISION_TRACE in the agent environment turns decision tracing on over REST; absent, it stays off', async () => {
    expect(process.env['SVC_DECISION_TRACE']).toBeUndefined();
    expect((await simulate({ SVC_DECISION_TRACE: 'yes' })).decision_trace).toBe(true);
    expect((await simulate({})).decision_trace).toBe(false);
  });
});
