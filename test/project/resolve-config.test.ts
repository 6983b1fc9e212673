import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import {
  ConfigError,
  findManifest,
  resolveProjectConfig,
  validateResolvedConfig,
  type ResolvedConfig,
} from '../../agent/project/resolve-config.js';
import { cleanupProjects, makeProject, toml } from './helpers.js';

afterAll(cleanupProjects);

function catchConfigError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

function get(tree: Record<string, unknown>, dotted: string): unknown {
  let cur: unknown = tree;
  for (const key of dotted.split('.')) {
    if (typeof cur !== 'object' || cur === null) return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

describe('resolveProjectConfig: layers', () => {
  it('applies base then environment (environment wins) and reads fragments (docs/program-language.md §7.6 example)', () => {
    const root = makeProject({
      'svc.toml': toml`
        [project]
        name = "Yard Inspection"
        version = "0.1.0"
        language = "0.2"
        [config]
        health = "svc.health.toml"
        devices = "svc.devices.toml"
        [extends]
        environment = "layers/north.toml"
        base = "layers/base.toml"
      `,
      'layers/base.toml': toml`
        [health]
        default_interval_ms = 4000
        policy = "restart"
      `,
      'layers/north.toml': toml`
        [health]
        default_interval_ms = 2000
      `,
      'svc.devices.toml': toml`
        [fleet]
        id = "yard-fleet"
        [[fleet.robots]]
        id = "insp-01"
        hardware_profile = "RoverV2"
        model = "rover"
      `,
      'svc.health.toml': toml`
        [health]
        inject_faults = ["lidar_dropout"]
      `,
    });
    const cfg = resolveProjectConfig(path.join(root, 'svc.toml'));
    expect(cfg.projectRoot).toBe(root);
    expect(cfg.manifestPath).toBe(path.join(root, 'svc.toml'));
    expect(cfg.projectName).toBe('Yard Inspection');
    expect(cfg.projectVersion).toBe('0.1.0');
    expect(cfg.projectLanguage).toBe('0.2');
    // Order comes from base → environment, not from the order keys are written in.
    expect(cfg.layersApplied).toEqual(['layers/base.toml', 'layers/north.toml']);
    expect(cfg.fragmentsLoaded).toEqual(['svc.devices.toml', 'svc.health.toml']);
    expect(cfg.tree['health']).toEqual({ default_interval_ms: 2000, policy: 'restart', inject_faults: ['lidar_dropout'] });
    expect(cfg.tree['project']).toEqual({ name: 'Yard Inspection', version: '0.1.0', language: '0.2' });
    expect(cfg.fleetId).toBe('yard-fleet');
    expect(cfg.robots).toEqual([
      { id: 'insp-01', hardware_profile: 'RoverV2', model: 'rover', compute: null, devices: [] },
    ]);
    // The root manifest's own tables are not merged.
    expect(cfg.tree['config']).toBeUndefined();
    expect(cfg.tree['extends']).toBeUndefined();
    expect(cfg.manifest['config']).toEqual({ health: 'svc.health.toml', devices: 'svc.devices.toml' });
  });

  it('applies all four layer kinds in order and accepts a directory as configPath', () => {
    const root = makeProject({
      'svc.toml': toml`
        [extends]
        robot = "l/robot.toml"
        deployment = "l/deploy.toml"
        environment = "l/env.toml"
        base = "l/base.toml"
      `,
      'l/base.toml': 'who = "base"\nbase = true\n',
      'l/env.toml': 'who = "environment"\nenv = true\n',
      'l/deploy.toml': 'who = "deployment"\n',
      'l/robot.toml': 'who = "robot"\n',
    });
    const cfg = resolveProjectConfig(root);
    expect(cfg.manifestPath).toBe(path.join(root, 'svc.toml'));
    expect(cfg.layersApplied).toEqual(['l/base.toml', 'l/env.toml', 'l/deploy.toml', 'l/robot.toml']);
    expect(cfg.tree['who']).toBe('robot');
    expect(cfg.tree['base']).toBe(true);
    expect(cfg.tree['env']).toBe(true);
  });

  it('follows [extends] recursively with paths relative to the naming layer', () => {
    const root = makeProject({
      'svc.toml': '[extends]\nenvironment = "env/site.toml"\n',
      'env/site.toml': toml`
        [extends]
        base = "../shared/defaults.toml"
        [health]
        default_interval_ms = 1500
      `,
      'shared/defaults.toml': toml`
        [extends]
        base = "core.toml"
        [health]
        default_interval_ms = 4000
        policy = "restart"
      `,
      'shared/core.toml': '[health]\npolicy = "ignore"\ncore = true\n',
    });
    const cfg = resolveProjectConfig(path.join(root, 'svc.toml'));
    expect(cfg.layersApplied).toEqual(['shared/core.toml', 'shared/defaults.toml', 'env/site.toml']);
    expect(cfg.tree['health']).toEqual({ policy: 'restart', core: true, default_interval_ms: 1500 });
    expect(cfg.tree['extends']).toBeUndefined();
  });

  it('applies a layer reached twice (diamond) only once', () => {
    const root = makeProject({
      'svc.toml': '[extends]\nbase = "common.toml"\nenvironment = "env.toml"\n',
      'common.toml': 'value = "common"\n',
      'env.toml': 'value = "env"\n[extends]\nbase = "common.toml"\n',
    });
    const cfg = resolveProjectConfig(path.join(root, 'svc.toml'));
    expect(cfg.layersApplied).toEqual(['common.toml', 'env.toml']);
    expect(cfg.tree['value']).toBe('env');
  });

  it('reports a layer cycle as config_layer_cycle', () => {
    const root = makeProject({
      'svc.toml': '[extends]\nbase = "a.toml"\n',
      'a.toml': '[extends]\nbase = "sub/b.toml"\n',
      'sub/b.toml': '[extends]\nenvironment = "../a.toml"\n',
    });
    const err = catchConfigError(() => resolveProjectConfig(path.join(root, 'svc.toml')));
    expect(err.code).toBe('config_layer_cycle');
    expect(err.file).toBe(path.join(root, 'a.toml'));
    expect(err.message).toContain('a.toml -> sub/b.toml -> a.toml');
  });

  it('reports a layer that extends the root manifest as a cycle, and a self-extending layer', () => {
    const back = makeProject({ 'svc.toml': '[extends]\nbase = "l.toml"\n', 'l.toml': '[extends]\nbase = "svc.toml"\n' });
    expect(catchConfigError(() => resolveProjectConfig(path.join(back, 'svc.toml'))).code).toBe('config_layer_cycle');
    const self = makeProject({ 'svc.toml': '[extends]\nbase = "l.toml"\n', 'l.toml': '[extends]\nbase = "./l.toml"\n' });
    expect(catchConfigError(() => resolveProjectConfig(path.join(self, 'svc.toml'))).code).toBe('config_layer_cycle');
  });

  it('reports a missing layer file as config_not_found naming the file', () => {
    const root = makeProject({ 'svc.toml': '[extends]\nbase = "layers/nope.toml"\n' });
    const err = catchConfigError(() => resolveProjectConfig(path.join(root, 'svc.toml')));
    expect(err.code).toBe('config_not_found');
    expect(err.file).toBe(path.join(root, 'layers/nope.toml'));
    expect(err.message).toContain(path.join(root, 'layers/nope.toml'));
  });
});

describe('resolveProjectConfig: fragments', () => {
  const ORDER = [
    'hardware',
    'devices',
    'facilities',
    'network_devices',
    'providers',
    'fleet',
    'security',
    'health',
    'readiness',
    'assurance',
    'recovery',
    'mission',
    'governance',
  ];

  it('loads fragments in the fixed order regardless of [config] order, then svc.governance.toml, then [project]', () => {
    const files: Record<string, string> = {};
    const reversed = [...ORDER].reverse();
    files['svc.toml'] =
      '[project]\nname = "frag"\n[config]\n' + reversed.map((k) => `${k} = "frags/${k}.toml"`).join('\n') + '\n';
    for (const key of ORDER) files[`frags/${key}.toml`] = `last = "${key}"\n[seen]\n${key} = true\n`;
    files['svc.governance.toml'] = '[governance]\npolicy = "strict"\n[project]\nname = "overridden-by-synthetic"\n';
    const root = makeProject(files);
    const cfg = resolveProjectConfig(path.join(root, 'svc.toml'));
    expect(cfg.fragmentsLoaded).toEqual([...ORDER.map((k) => `frags/${k}.toml`), 'svc.governance.toml']);
    expect(Object.keys(cfg.tree['seen'] as object)).toEqual(ORDER);
    expect(cfg.tree['last']).toBe('governance');
    expect(cfg.tree['governance']).toEqual({ policy: 'strict' });
    expect(get(cfg.tree, 'project.name')).toBe('frag');
  });

  it('does not load svc.governance.toml twice when it is also the governance fragment', () => {
    const root = makeProject({
      'svc.toml': '[config]\ngovernance = "svc.governance.toml"\n[merge]\nrules = "append"\n',
      'svc.governance.toml': 'rules = ["r1"]\n',
    });
    const cfg = resolveProjectConfig(path.join(root, 'svc.toml'));
    expect(cfg.fragmentsLoaded).toEqual(['svc.governance.toml']);
    expect(cfg.tree['rules']).toEqual(['r1']);
  });

  it('accepts JSON fragments and JSON layers', () => {
    const root = makeProject({
      'svc.toml': '[extends]\nbase = "base.json"\n[config]\nproviders = "providers.json"\nhealth = "svc.health.toml"\n',
      'base.json': JSON.stringify({ health: { default_interval_ms: 4000 }, dependencies: { nav: '1.0' } }),
      'providers.json': JSON.stringify({ providers: { ros2: { package: 'svc-ros2' }, can: { package: 'svc-can' } } }),
      'svc.health.toml': '[health]\ndefault_interval_ms = 250\n',
    });
    const cfg = resolveProjectConfig(path.join(root, 'svc.toml'));
    expect(cfg.layersApplied).toEqual(['base.json']);
    expect(cfg.fragmentsLoaded).toEqual(['providers.json', 'svc.health.toml']);
    expect(cfg.providers).toEqual(['can', 'ros2']);
    expect(cfg.packages).toEqual(['nav']);
    expect(get(cfg.tree, 'health.default_interval_ms')).toBe(250);
  });

  it('reports a JSON syntax error as config_parse_error naming the file', () => {
    const root = makeProject({ 'svc.toml': '[config]\nfleet = "fleet.json"\n', 'fleet.json': '{\n  "fleet": {\n    "id": \n}\n' });
    const err = catchConfigError(() => resolveProjectConfig(path.join(root, 'svc.toml')));
    expect(err.code).toBe('config_parse_error');
    expect(err.file).toBe(path.join(root, 'fleet.json'));
    expect(err.message).toContain('fleet.json');
  });

  it('reports a missing fragment as config_fragment_missing naming the file', () => {
    const root = makeProject({
      'svc.toml': '[config]\nhardware = "hw.toml"\nhealth = "missing/health.toml"\n',
      'hw.toml': '[hardware]\nboard = "x"\n',
    });
    const err = catchConfigError(() => resolveProjectConfig(path.join(root, 'svc.toml')));
    expect(err.code).toBe('config_fragment_missing');
    expect(err.file).toBe(path.join(root, 'missing/health.toml'));
    expect(err.message).toContain(path.join(root, 'missing/health.toml'));
    expect(err.message).toContain('health');
  });

  it('reports a TOML syntax error with file, line and column', () => {
    const root = makeProject({
      'svc.toml': '[config]\nhealth = "svc.health.toml"\n',
      'svc.health.toml': '[health]\ninterval_ms = 100\npolicy = = "restart"\n',
    });
    const err = catchConfigError(() => resolveProjectConfig(path.join(root, 'svc.toml')));
    expect(err.code).toBe('config_parse_error');
    expect(err.file).toBe(path.join(root, 'svc.health.toml'));
    expect(err.message).toContain(path.join(root, 'svc.health.toml'));
    expect(err.message).toMatch(/line 3, column \d+/);
    expect(err.line).toBe(3);
    expect(err.column).toBeGreaterThan(0);
  });

  it('reports a TOML syntax error in the root manifest', () => {
    const root = makeProject({ 'svc.toml': '[project]\nname = "x"\n[config\n' });
    const err = catchConfigError(() => resolveProjectConfig(path.join(root, 'svc.toml')));
    expect(err.code).toBe('config_parse_error');
    expect(err.file).toBe(path.join(root, 'svc.toml'));
    expect(err.message).toMatch(/line 3, column \d+/);
  });

  it('rejects non-string layer and fragment entries and unknown merge strategies with config_invalid', () => {
    const cases: Record<string, string> = {
      layer: '[extends]\nbase = 5\n',
      fragment: '[config]\nhealth = ["svc.health.toml", 3]\n',
      empty: '[config]\nhealth = ""\n',
      strategy: '[merge]\ndevices = "union"\n',
      table: 'config = "svc.health.toml"\n',
    };
    for (const [name, manifest] of Object.entries(cases)) {
      const root = makeProject({ 'svc.toml': manifest, 'svc.health.toml': '' });
      const err = catchConfigError(() => resolveProjectConfig(path.join(root, 'svc.toml')));
      expect(err.code, name).toBe('config_invalid');
      expect(err.file, name).toBe(path.join(root, 'svc.toml'));
    }
  });

  it('reports a missing manifest as config_not_found', () => {
    const root = makeProject({});
    const err = catchConfigError(() => resolveProjectConfig(path.join(root, 'svc.toml')));
    expect(err.code).toBe('config_not_found');
    expect(err.file).toBe(path.join(root, 'svc.toml'));
  });
});

describe('resolveProjectConfig: merge strategies', () => {
  it('merges robots and devices by id across layers and fragments', () => {
    const root = makeProject({
      'svc.toml': '[extends]\nbase = "base.toml"\n[config]\ndevices = "devices.toml"\nfleet = "fleet.toml"\n',
      'base.toml': toml`
        [fleet]
        id = "f1"
        [[fleet.robots]]
        id = "r1"
        model = "A"
        [[fleet.robots]]
        id = "r2"
        model = "B"
        [fleet.robots.compute]
        id = "jetson-2"
        [[fleet.robots.compute.devices]]
        id = "cam"
        type = "camera"
        [[devices]]
        id = "gps"
        type = "gps"
        port = "/dev/ttyUSB0"
        [[devices]]
        id = "imu"
        type = "imu"
      `,
      'devices.toml': toml`
        [[devices]]
        id = "lidar"
        type = "lidar"
        [[devices]]
        id = "gps"
        port = "/dev/ttyACM0"
        serial = "GPS-1"
      `,
      'fleet.toml': toml`
        [[fleet.robots]]
        id = "r3"
        [[fleet.robots]]
        id = "r2"
        hardware_profile = "RoverV2"
        [fleet.robots.compute]
        serial = "J2"
        [[fleet.robots.compute.devices]]
        id = "cam"
        port = "/dev/video0"
        [[fleet.robots.compute.devices]]
        id = "motor"
        type = "motor"
      `,
    });
    const cfg = resolveProjectConfig(path.join(root, 'svc.toml'));
    expect(cfg.robots.map((r) => r.id)).toEqual(['r1', 'r2', 'r3']);
    const r2 = cfg.robots[1]!;
    expect(r2).toMatchObject({ model: 'B', hardware_profile: 'RoverV2', compute: { id: 'jetson-2', type: null, serial: 'J2' } });
    expect(r2.devices.map((d) => [d.id, d.device_type, d.port])).toEqual([
      ['cam', 'camera', '/dev/video0'],
      ['motor', 'motor', null],
    ]);
    const declared = cfg.devices.filter((d) => d.source === 'devices');
    expect(declared.map((d) => d.id)).toEqual(['gps', 'imu', 'lidar']);
    expect(declared[0]).toMatchObject({ device_type: 'gps', port: '/dev/ttyACM0', serial: 'GPS-1' });
    expect(declared[0]!.raw).toEqual({ id: 'gps', type: 'gps', port: '/dev/ttyACM0', serial: 'GPS-1' });
  });

  it('honours append and replace from [merge], including for robots/devices', () => {
    const root = makeProject({
      'svc.toml': toml`
        [merge]
        known_failures = "append"
        devices = "replace"
        "fleet.robots" = "append"
        [extends]
        base = "base.toml"
        [config]
        recovery = "recovery.toml"
      `,
      'base.toml': toml`
        known_failures = ["a", "b"]
        required_capabilities = ["x", "y"]
        [[devices]]
        id = "old"
        [[fleet.robots]]
        id = "r1"
        model = "A"
      `,
      'recovery.toml': toml`
        known_failures = ["b", "c"]
        required_capabilities = ["z"]
        [[devices]]
        id = "new"
        [[fleet.robots]]
        id = "r1"
        model = "B"
      `,
    });
    const cfg = resolveProjectConfig(path.join(root, 'svc.toml'));
    expect(cfg.tree['known_failures']).toEqual(['a', 'b', 'b', 'c']);
    expect(cfg.tree['required_capabilities']).toEqual(['z']);
    expect((cfg.tree['devices'] as unknown[]).length).toBe(1);
    expect(cfg.devices.map((d) => d.id)).toEqual(['new']);
    expect(cfg.robots.map((r) => [r.id, r.model])).toEqual([
      ['r1', 'A'],
      ['r1', 'B'],
    ]);
  });

  it('accepts a nested [merge] table as a dotted path', () => {
    const root = makeProject({
      'svc.toml': '[merge.mission]\nrequired_capabilities = "append"\n[extends]\nbase = "a.toml"\nenvironment = "b.toml"\n',
      'a.toml': '[mission]\nrequired_capabilities = ["nav"]\nother = ["1"]\n',
      'b.toml': '[mission]\nrequired_capabilities = ["dock"]\nother = ["2"]\n',
    });
    const cfg = resolveProjectConfig(path.join(root, 'svc.toml'));
    expect(cfg.tree['mission']).toEqual({ required_capabilities: ['nav', 'dock'], other: ['2'] });
  });
});

describe('resolveProjectConfig: root manifest data tables', () => {
  it('does not merge the root manifest data tables into the tree', () => {
    const root = makeProject({
      'svc.toml': toml`
        [package]
        name = "pkg-name"
        version = "2.0.0"
        [readiness]
        minimum_score = 10
        [dependencies]
        root_only = "1.0"
        [hardware]
        targets = ["RoverV2"]
        [config]
        readiness = "svc.readiness.toml"
      `,
      'svc.readiness.toml': '[readiness.weights]\nhardware = 3\n[dependencies]\nnav = "1.2"\nperception = "0.3"\n',
    });
    const cfg = resolveProjectConfig(path.join(root, 'svc.toml'));
    expect(cfg.tree['readiness']).toEqual({ weights: { hardware: 3 } });
    expect(get(cfg.tree, 'readiness.minimum_score')).toBeUndefined();
    expect(cfg.tree['hardware']).toBeUndefined();
    expect(cfg.packages).toEqual(['nav', 'perception']);
    expect(cfg.manifest['readiness']).toEqual({ minimum_score: 10 });
    // [project] falls back to [package] name/version.
    expect(cfg.projectName).toBe('pkg-name');
    expect(cfg.projectVersion).toBe('2.0.0');
    expect(cfg.projectLanguage).toBeNull();
    expect(cfg.tree['project']).toEqual({ name: 'pkg-name', version: '2.0.0' });
  });

  it('has an empty tree apart from [project] for a bare manifest', () => {
    const root = makeProject({ 'svc.toml': '[readiness]\nminimum_score = 10\n' });
    const cfg = resolveProjectConfig(path.join(root, 'svc.toml'));
    expect(cfg.tree).toEqual({ project: {} });
    expect(cfg).toMatchObject({
      projectName: null,
      layersApplied: [],
      fragmentsLoaded: [],
      fleetId: null,
      robots: [],
      devices: [],
      humans: [],
      providers: [],
      packages: [],
    });
  });
});

describe('findManifest', () => {
  it('walks up from a nested program file to the first directory with svc.toml', () => {
    const root = makeProject({
      'svc.toml': '[project]\nname = "outer"\n',
      'programs/patrol/main.sd': 'robot R {}\n',
      'sub/svc.toml': '[project]\nname = "inner"\n',
      'sub/programs/deep/x.sd': 'robot S {}\n',
    });
    expect(findManifest(path.join(root, 'programs/patrol/main.sd'))).toBe(path.join(root, 'svc.toml'));
    expect(findManifest(path.join(root, 'programs/patrol'))).toBe(path.join(root, 'svc.toml'));
    expect(findManifest(root)).toBe(path.join(root, 'svc.toml'));
    expect(findManifest(path.join(root, 'sub/programs/deep/x.sd'))).toBe(path.join(root, 'sub/svc.toml'));
    // A file that does not exist yet still starts from its directory.
    expect(findManifest(path.join(root, 'programs/new.sd'))).toBe(path.join(root, 'svc.toml'));
    const found = findManifest(path.join(root, 'programs/patrol/main.sd'));
    expect(resolveProjectConfig(found!).projectName).toBe('outer');
  });

  it('returns null when no ancestor has svc.toml', () => {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'svc-nomanifest-')));
    try {
      fs.mkdirSync(path.join(dir, 'a/b'), { recursive: true });
      const expected = findManifest(os.tmpdir()); // normally null; tolerate a stray manifest above tmp
      expect(findManifest(path.join(dir, 'a/b/file.sd'))).toBe(expected);
      expect(expected === null || !expected.startsWith(dir)).toBe(true);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('resolveProjectConfig: device registry', () => {
  function devicesProject(): string {
    return makeProject({
      'svc.toml': '[config]\ndevices = "svc.devices.toml"\nfleet = "svc.fleet.toml"\n',
      'svc.devices.toml': toml`
        [[devices]]
        id = "cam-front"
        type = "camera"
        logical_name = "front_camera"
        ip = "10.0.0.5"
        mac = "aa:bb:cc:dd:ee:ff"
        endpoint = "rtsp://10.0.0.5/stream"
        capabilities = ["vision", 7, "streaming"]
        [[devices]]
        id = "motor-left"
        device_type = "motor"
        bus = "can0"
        can_id = "0x123"
        robot_id = "r1"
        [[devices]]
        id = "motor-right"
        bus = "can0"
        can_id = 292
        [[devices]]
        id = "broker"
        protocol = "MQTT"
        [[devices]]
        id = "shared-lidar"
        type = "lidar"
        serial = "L-1"
      `,
      'svc.fleet.toml': toml`
        [fleet]
        id = "fleet-a"
        [[fleet.robots]]
        id = "r1"
        hardware_profile = "RoverV2"
        [fleet.robots.compute]
        id = "jetson"
        type = "jetson-orin"
        serial = "JO-1"
        [[fleet.robots.compute.devices]]
        id = "imu"
        type = "imu"
        provider = "svc-imu"
        port = "/dev/ttyUSB0"
        mount = "base_link"
        capabilities = ["orientation"]
        [[fleet.robots.compute.devices]]
        id = "shared-lidar"
        type = "lidar"
        port = "/dev/ttyUSB1"
        [[fleet.robots]]
        id = "r2"
        [[fleet.robots.compute.devices]]
        id = "gps"
        type = "gps"
        robot_id = "someone-else"
      `,
    });
  }

  it('lists [[devices]] then fleet compute devices with robot_id, de-duplicated by id (first wins)', () => {
    const cfg = resolveProjectConfig(path.join(devicesProject(), 'svc.toml'));
    expect(cfg.fleetId).toBe('fleet-a');
    expect(cfg.devices.map((d) => [d.id, d.source, d.robot_id])).toEqual([
      ['cam-front', 'devices', null],
      ['motor-left', 'devices', 'r1'],
      ['motor-right', 'devices', null],
      ['broker', 'devices', null],
      ['shared-lidar', 'devices', null],
      ['imu', 'fleet_compute', 'r1'],
      ['gps', 'fleet_compute', 'r2'],
    ]);
    expect(cfg.robots.map((r) => r.devices.map((d) => d.id))).toEqual([['imu', 'shared-lidar'], ['gps']]);
    expect(cfg.robots[0]!.compute).toEqual({ id: 'jetson', type: 'jetson-orin', serial: 'JO-1' });
    expect(cfg.robots[1]!.compute).toEqual({ id: null, type: null, serial: null });
  });

  it('normalises device fields', () => {
    const cfg = resolveProjectConfig(path.join(devicesProject(), 'svc.toml'));
    const byId = new Map(cfg.devices.map((d) => [d.id, d]));
    expect(byId.get('cam-front')).toMatchObject({
      device_type: 'camera',
      logical_name: 'front_camera',
      ip_address: '10.0.0.5',
      mac_address: 'aa:bb:cc:dd:ee:ff',
      endpoint_url: 'rtsp://10.0.0.5/stream',
      capabilities: ['vision', 'streaming'],
      networked: true,
      can_id: null,
      trust_level: null,
    });
    expect(byId.get('motor-left')).toMatchObject({ device_type: 'motor', bus: 'can0', can_id: 0x123, networked: false });
    expect(byId.get('motor-right')).toMatchObject({ device_type: 'unknown', can_id: 292 });
    expect(byId.get('broker')).toMatchObject({ protocol: 'MQTT', networked: true });
    expect(byId.get('imu')).toMatchObject({
      provider: 'svc-imu',
      port: '/dev/ttyUSB0',
      mount: 'base_link',
      capabilities: ['orientation'],
      networked: false,
      source: 'fleet_compute',
    });
    expect(byId.get('imu')!.raw).toEqual({
      id: 'imu',
      type: 'imu',
      provider: 'svc-imu',
      port: '/dev/ttyUSB0',
      mount: 'base_link',
      capabilities: ['orientation'],
    });
  });

  it('reads humans and people', () => {
    const root = makeProject({
      'svc.toml': '[config]\nfacilities = "people.toml"\n',
      'people.toml': toml`
        [[humans]]
        id = "h1"
        name = "Ada"
        role = "operator"
        email = "ada@example.com"
        [[people]]
        id = "h2"
        name = "Brian"
        [[people]]
        id = "h1"
        name = "duplicate"
      `,
    });
    const cfg = resolveProjectConfig(path.join(root, 'svc.toml'));
    expect(cfg.humans).toEqual([
      { id: 'h1', name: 'Ada', role: 'operator', email: 'ada@example.com', raw: { id: 'h1', name: 'Ada', role: 'operator', email: 'ada@example.com' } },
      { id: 'h2', name: 'Brian', role: null, email: null, raw: { id: 'h2', name: 'Brian' } },
    ]);
  });
});

describe('validateResolvedConfig', () => {
  function resolve(files: Record<string, string>): ResolvedConfig {
    return resolveProjectConfig(path.join(makeProject(files), 'svc.toml'));
  }

  it('passes a clean configuration, including a device declared in both registries', () => {
    const cfg = resolve({
      'svc.toml': '[config]\ndevices = "d.toml"\n',
      'd.toml': toml`
        [[devices]]
        id = "lidar"
        type = "lidar"
        port = "/dev/ttyUSB0"
        serial = "L1"
        [[devices]]
        id = "m1"
        bus = "can0"
        can_id = 1
        [[devices]]
        id = "m2"
        bus = "can0"
        can_id = 2
        [[devices]]
        id = "cam1"
        ip = "10.0.0.1"
        port = "554"
        [[devices]]
        id = "cam2"
        ip = "10.0.0.2"
        port = "554"
        [[fleet.robots]]
        id = "r1"
        [[fleet.robots.compute.devices]]
        id = "lidar"
        type = "lidar"
      `,
    });
    expect(validateResolvedConfig(cfg)).toEqual({ passed: true, findings: [] });
  });

  it('reports duplicate device ids, ports, bus/CAN id pairs and serials', () => {
    const cfg = resolve({
      'svc.toml': '[config]\ndevices = "d.toml"\n',
      'd.toml': toml`
        [[devices]]
        id = "gps"
        port = "/dev/ttyUSB0"
        serial = "S-1"
        [[devices]]
        id = "gps"
        type = "gps"
        [[devices]]
        id = "imu"
        port = "/dev/ttyUSB0"
        [[devices]]
        id = "m1"
        bus = "can0"
        can_id = "0x10"
        [[devices]]
        id = "m2"
        bus = "can0"
        can_id = 16
        [[devices]]
        id = "m3"
        bus = "can1"
        can_id = 16
        [[devices]]
        id = "cam"
        serial = "S-1"
        [[fleet.robots]]
        id = "r1"
        [[fleet.robots.compute.devices]]
        id = "arm"
        [[fleet.robots]]
        id = "r2"
        [[fleet.robots.compute.devices]]
        id = "arm"
      `,
    });
    const result = validateResolvedConfig(cfg);
    expect(result.passed).toBe(false);
    const errors = result.findings.filter((f) => f.severity === 'error').map((f) => f.path);
    expect(errors.sort()).toEqual(
      [
        'devices[1].id', // duplicate id "gps" within [[devices]]
        'devices[2].port', // imu reuses /dev/ttyUSB0
        'devices[4].can_id', // m2 = 0x10 on can0 like m1 (m3 is on can1)
        'devices[6].serial', // cam reuses S-1
        'fleet.robots[1].compute.devices[0].id', // arm on two robots
      ].sort(),
    );
    const messages = result.findings.map((f) => f.message).join('\n');
    expect(messages).toContain('duplicate device id "gps"');
    expect(messages).toContain('duplicate port "/dev/ttyUSB0"');
    expect(messages).toContain('duplicate bus/CAN id can0/0x10');
    expect(messages).toContain('duplicate serial "S-1"');
  });

  it('scopes ports by robot and reports duplicate robot ids and compute serials', () => {
    const cfg = resolve({
      'svc.toml': '[config]\nfleet = "f.toml"\n',
      'f.toml': toml`
        [[fleet.robots]]
        id = "r1"
        compute = { serial = "C-1" }
        [[fleet.robots]]
        id = "r2"
        compute = { serial = "C-1", devices = [ { id = "imu2", port = "/dev/ttyUSB0" } ] }
        [[fleet.robots]]
        id = "r3"
        compute = { devices = [ { id = "imu3", port = "/dev/ttyUSB0" } ] }
      `,
    });
    let result = validateResolvedConfig(cfg);
    expect(result.findings.map((f) => f.path)).toEqual(['fleet.robots[1].compute.serial']);

    const dup = resolve({
      'svc.toml': '[config]\nfleet = "f.toml"\n',
      'f.toml': '[[fleet.robots]]\nid = "r1"\n[[fleet.robots]]\nid = "r1"\n[[fleet.robots]]\nmodel = "no-id"\n',
    });
    result = validateResolvedConfig(dup);
    expect(result.passed).toBe(false);
    expect(result.findings.map((f) => f.path)).toEqual(['fleet.robots[1].id', 'fleet.robots[2].id']);
  });

  it('warns (without failing) when the two declarations of a device disagree on type', () => {
    const cfg = resolve({
      'svc.toml': '[config]\ndevices = "d.toml"\n',
      'd.toml': toml`
        [[devices]]
        id = "sensor"
        type = "lidar"
        [[fleet.robots]]
        id = "r1"
        [[fleet.robots.compute.devices]]
        id = "sensor"
        type = "camera"
      `,
    });
    const result = validateResolvedConfig(cfg);
    expect(result.passed).toBe(true);
    expect(result.findings).toHaveLength(1);
    expect(result.findings[0]).toMatchObject({ severity: 'warning', path: 'fleet.robots[0].compute.devices[0].type' });
  });
});
