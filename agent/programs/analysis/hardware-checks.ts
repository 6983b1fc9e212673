/**
 * Hardware checks of one robot against one profile (docs/program-language.md §9.2), and the program-level
 * items that precede them. Messages are ours; battery messages say "battery" and use "below" when
 * the mission does not fit, because readiness keys issues on those words (§9.5 rule 2).
 */
import type {
  HardwareRequirements,
  Loc,
  NetworkRequirements,
  Program,
  Quantity,
  RobotDecl,
  Stmt,
  TaskDecl,
} from '../language/ast.js';
import type { HardwareProfile } from './hardware-profiles.js';
import { formatNumber, toHertz, toMegabytes, toMilliseconds, toPercent, toWatts } from './quantities.js';

export type ItemSeverity = 'pass' | 'warning' | 'error';

export interface HardwareItem {
  category: string;
  message: string;
  severity: ItemSeverity;
  line: number;
  column: number;
}

export function item(category: string, severity: ItemSeverity, message: string, loc: Loc | null): HardwareItem {
  return { category, message, severity, line: loc?.line ?? 0, column: loc?.column ?? 0 };
}

/** Fixed CPU cost of one period, in ms (docs/program-language.md §9.2 aggregate CPU model). */
export const CPU_MS_PER_PERIOD = 5;
export const BATTERY_MARGIN_FRACTION = 0.2;
export const UNKNOWN_BATTERY_MESSAGE = 'Mission duration declared but target battery capacity unknown';

// ---------------------------------------------------------------------------
// Program-level items (come first)

export function programLevelItems(program: Program): HardwareItem[] {
  const items: HardwareItem[] = [];
  for (const g of program.geofences) items.push(item('geofence', 'pass', `Geofence '${g.name ?? g.keyword}' declared`, g.loc));
  for (const c of program.connectivityPolicies) {
    items.push(item('connectivity_policy', 'pass', `Connectivity policy '${c.name ?? c.keyword}' declared`, c.loc));
  }
  for (const name of program.imports) items.push(item('import', 'pass', `Framework import '${name}' declared`, null));
  for (const c of program.certifications) {
    const level = c.level === null ? '' : ` (level ${c.level})`;
    items.push(item('certification', 'pass', `Certification ${c.standard}${level} declared`, c.loc));
  }
  return items;
}

// ---------------------------------------------------------------------------
// One robot against one profile

export function verifyRobotOnProfile(program: Program, robot: RobotDecl, profile: HardwareProfile): HardwareItem[] {
  const items: HardwareItem[] = [];
  const p = profile.name;
  const sensorTypes = new Set(profile.sensors);
  const actuatorTypes = new Set(profile.actuators);

  for (const s of robot.sensors) {
    items.push(
      sensorTypes.has(s.type)
        ? item('sensor', 'pass', `Sensor '${s.name}' (${s.type}) supported by ${p}`, s.loc)
        : item('sensor', 'error', `Sensor '${s.name}' (${s.type}) not supported by ${p}`, s.loc),
    );
  }

  if (robot.observe.length > 0) {
    const sensorsByName = new Map(robot.sensors.map((s) => [s.name, s]));
    const lowerTypes = new Map(profile.sensors.map((t) => [t.toLowerCase(), t]));
    for (const name of robot.observe) {
      const decl = sensorsByName.get(name);
      const supported = decl !== undefined ? sensorTypes.has(decl.type) : lowerTypes.has(name.toLowerCase());
      const label = decl !== undefined ? `'${name}' (${decl.type})` : `'${name}'`;
      items.push(
        supported
          ? item('observe', 'pass', `Fused sensor ${label} supported by ${p}`, decl?.loc ?? robot.loc)
          : item('observe', 'error', `Fused sensor ${label} not supported by ${p}`, decl?.loc ?? robot.loc),
      );
    }
  }

  for (const a of robot.actuators) {
    items.push(
      actuatorTypes.has(a.type)
        ? item('actuator', 'pass', `Actuator '${a.name}' (${a.type}) supported by ${p}`, a.loc)
        : item('actuator', 'error', `Actuator '${a.name}' (${a.type}) not supported by ${p}`, a.loc),
    );
  }

  const hw = robot.requiresHardware ?? program.requiresHardware;
  if (hw !== null) items.push(...hardwareRequirementItems(hw, profile));
  const net = robot.requiresNetwork ?? program.requiresNetwork;
  if (net !== null) items.push(...networkRequirementItems(net, profile));
  const conn = robot.requiresConnectivity ?? program.requiresConnectivity;
  if (conn !== null) items.push(...networkRequirementItems(conn, profile));

  for (const task of robot.tasks) items.push(...budgetItems(task, profile));
  items.push(...batteryItems(robot, profile));
  items.push(...timingItems(robot, profile));
  items.push(...aiModelItems(robot, profile));
  items.push(...adapterItems(robot));
  items.push(...topicBandwidthItems(robot, profile));
  return items;
}

// ---------------------------------------------------------------------------
// Requirements

function hardwareRequirementItems(req: HardwareRequirements, profile: HardwareProfile): HardwareItem[] {
  const items: HardwareItem[] = [];
  const p = profile.name;
  const capacity = (label: string, requiredGb: number | null, haveMb: number | null): void => {
    if (requiredGb === null) return;
    const need = `${formatNumber(requiredGb)} GB`;
    if (haveMb === null) {
      items.push(item('requirements', 'warning', `${label} requirement ${need} cannot be verified: ${p} ${label.toLowerCase()} unknown`, req.loc));
    } else if (haveMb / 1024 >= requiredGb) {
      items.push(item('requirements', 'pass', `${p} ${label.toLowerCase()} ${formatNumber(haveMb / 1024)} GB meets required ${need}`, req.loc));
    } else {
      items.push(item('requirements', 'error', `${p} ${label.toLowerCase()} ${formatNumber(haveMb / 1024)} GB is below required ${need}`, req.loc));
    }
  };
  capacity('Memory', req.memoryGb, profile.memoryMb);
  capacity('Storage', req.storageGb, profile.storageMb);
  if (req.gpu === true) {
    items.push(
      hasGpu(profile)
        ? item('requirements', 'pass', `GPU required and provided by ${p}`, req.loc)
        : item('requirements', 'error', `GPU required but ${p} has none`, req.loc),
    );
  }
  const sensors = new Set(profile.sensors);
  for (const s of req.sensors) {
    items.push(
      sensors.has(s)
        ? item('requirements', 'pass', `Required sensor '${s}' provided by ${p}`, req.loc)
        : item('requirements', 'error', `Required sensor '${s}' not provided by ${p}`, req.loc),
    );
  }
  const actuators = new Set(profile.actuators);
  for (const a of req.actuators) {
    items.push(
      actuators.has(a)
        ? item('requirements', 'pass', `Required actuator '${a}' provided by ${p}`, req.loc)
        : item('requirements', 'error', `Required actuator '${a}' not provided by ${p}`, req.loc),
    );
  }
  return items;
}

function networkRequirementItems(req: NetworkRequirements, profile: HardwareProfile): HardwareItem[] {
  const items: HardwareItem[] = [];
  const p = profile.name;
  if (req.bandwidthMbps !== null) {
    const need = `${formatNumber(req.bandwidthMbps)} Mbps`;
    if (profile.bandwidthMbps === null) {
      items.push(item('network', 'warning', `Bandwidth requirement ${need} cannot be verified: ${p} bandwidth unknown`, req.loc));
    } else if (profile.bandwidthMbps >= req.bandwidthMbps) {
      items.push(item('network', 'pass', `${p} bandwidth ${formatNumber(profile.bandwidthMbps)} Mbps meets required ${need}`, req.loc));
    } else {
      items.push(item('network', 'error', `${p} bandwidth ${formatNumber(profile.bandwidthMbps)} Mbps is below required ${need}`, req.loc));
    }
  }
  if (req.latencyMs !== null) {
    const need = `${formatNumber(req.latencyMs)} ms`;
    if (profile.latencyMs === null) {
      items.push(item('network', 'warning', `Latency requirement ${need} cannot be verified: ${p} latency unknown`, req.loc));
    } else if (profile.latencyMs <= req.latencyMs) {
      items.push(item('network', 'pass', `${p} latency ${formatNumber(profile.latencyMs)} ms within required ${need}`, req.loc));
    } else {
      items.push(item('network', 'error', `${p} latency ${formatNumber(profile.latencyMs)} ms exceeds required ${need}`, req.loc));
    }
  }
  const links = new Set(profile.connectivity);
  for (const link of req.connectivity) {
    items.push(
      links.has(link)
        ? item('connectivity', 'pass', `Required connectivity '${link}' available on ${p}`, req.loc)
        : item('connectivity', 'error', `Required connectivity '${link}' not available on ${p}`, req.loc),
    );
  }
  return items;
}

function hasGpu(profile: HardwareProfile): boolean {
  return profile.gpu === true || (typeof profile.gpu === 'number' && profile.gpu > 0);
}

// ---------------------------------------------------------------------------
// Task budgets

const TIME_RESOURCES = new Set(['time', 'duration', 'latency', 'execution', 'execution_time', 'wcet', 'runtime']);

function budgetItems(task: TaskDecl, profile: HardwareProfile): HardwareItem[] {
  const items: HardwareItem[] = [];
  const p = profile.name;
  // An on-demand task (no `every`) has no period: its time budget is checked against nothing.
  const periodMs = task.every === null ? null : toMilliseconds(task.every);
  for (const { resource, limit } of task.budget) {
    const label = `Task '${task.name}' ${resource} budget ${limit.text}`;
    const key = resource.toLowerCase();
    if (key === 'cpu') {
      const percent = toPercent(limit);
      if (percent === null) {
        items.push(item('budget', 'warning', `${label} is not a percentage`, task.loc));
      } else if (percent > 100) {
        items.push(item('budget', 'error', `${label} exceeds 100%`, task.loc));
      } else if (periodMs !== null && periodMs > 0 && cpuPercent(periodMs) > percent) {
        items.push(item('budget', 'warning', `${label} is under the estimated ${formatNumber(cpuPercent(periodMs))}% load`, task.loc));
      } else {
        items.push(item('budget', 'pass', `${label} within ${p} limits`, task.loc));
      }
    } else if (key === 'memory') {
      const mb = toMegabytes(limit);
      if (mb === null || profile.memoryMb === null) {
        items.push(item('budget', 'warning', `${label} cannot be verified against ${p} memory`, task.loc));
      } else if (mb > profile.memoryMb) {
        items.push(item('budget', 'error', `${label} exceeds ${p} memory ${formatNumber(profile.memoryMb)} MB`, task.loc));
      } else {
        items.push(item('budget', 'pass', `${label} within ${p} limits`, task.loc));
      }
    } else if (TIME_RESOURCES.has(key)) {
      const ms = toMilliseconds(limit);
      if (ms === null || periodMs === null) {
        items.push(item('budget', 'warning', `${label} cannot be compared with the task period`, task.loc));
      } else if (ms > periodMs) {
        items.push(item('budget', 'error', `${label} exceeds the task period ${formatNumber(periodMs)} ms`, task.loc));
      } else {
        items.push(item('budget', 'pass', `${label} fits the task period ${formatNumber(periodMs)} ms`, task.loc));
      }
    } else if (key === 'power') {
      const watts = toWatts(limit);
      if (watts === null) {
        items.push(item('budget', 'warning', `${label} is not a power figure`, task.loc));
      } else if (watts > profile.powerW) {
        items.push(item('budget', 'error', `${label} exceeds ${p} power ${formatNumber(profile.powerW)} W`, task.loc));
      } else {
        items.push(item('budget', 'pass', `${label} within ${p} limits`, task.loc));
      }
    } else {
      items.push(item('budget', 'pass', `${label} declared`, task.loc));
    }
  }
  return items;
}

function cpuPercent(periodMs: number): number {
  return (CPU_MS_PER_PERIOD / periodMs) * 100;
}

// ---------------------------------------------------------------------------
// Mission battery

function batteryItems(robot: RobotDecl, profile: HardwareProfile): HardwareItem[] {
  const items: HardwareItem[] = [];
  const p = profile.name;
  for (const mission of robot.missions) {
    if (mission.durationHours === null) continue;
    const label = `Mission '${mission.name ?? `${robot.name}_mission`}'`;
    if (profile.batteryWh === null) {
      items.push(item('battery', 'warning', UNKNOWN_BATTERY_MESSAGE, mission.loc));
      continue;
    }
    const capacity = profile.batteryWh;
    const energy = profile.powerW * mission.durationHours;
    const margin = capacity - energy;
    const need = `${formatNumber(energy)} Wh`;
    const have = `${formatNumber(capacity)} Wh`;
    if (energy > capacity) {
      items.push(item('battery', 'error', `${label} needs ${need}: ${p} battery capacity ${have} is below the mission energy`, mission.loc));
    } else if (margin < capacity * BATTERY_MARGIN_FRACTION) {
      items.push(
        item('battery', 'warning', `${label} needs ${need}: ${p} battery margin ${formatNumber(margin)} Wh is below 20% of capacity ${have}`, mission.loc),
      );
    } else {
      const percent = capacity > 0 ? (margin / capacity) * 100 : 0;
      items.push(item('battery', 'pass', `${label} needs ${need} of ${p} battery capacity ${have} (margin ${formatNumber(percent)}%)`, mission.loc));
    }
  }
  return items;
}

// ---------------------------------------------------------------------------
// Timing

interface Period {
  label: string;
  every: Quantity;
  loc: Loc;
}

/** Task periods, then `loop every` statements found anywhere in the robot's bodies. */
export function robotPeriods(robot: RobotDecl): Period[] {
  const periods: Period[] = robot.tasks.flatMap((t) => (t.every === null ? [] : [{ label: `Task '${t.name}'`, every: t.every, loc: t.loc }]));
  const scan = (owner: string, body: readonly Stmt[]): void =>
    forEachLoop(body, (loop) => periods.push({ label: `Loop in ${owner}`, every: loop.every, loc: loop.loc }));
  for (const b of robot.behaviors) scan(`behavior '${b.name}'`, b.body);
  for (const t of robot.tasks) scan(`task '${t.name}'`, t.body);
  for (const m of robot.modes) scan(`mode '${m.name}'`, m.body);
  for (const w of robot.watchdogs) scan(`watchdog '${w.name}'`, w.body);
  for (const pl of robot.pipelines) scan(`pipeline '${pl.name}'`, pl.body);
  for (const tr of robot.triggers) scan(`${tr.kind} handler`, tr.body);
  return periods;
}

function forEachLoop(body: readonly Stmt[], visit: (loop: Extract<Stmt, { kind: 'loop' }>) => void): void {
  for (const stmt of body) {
    switch (stmt.kind) {
      case 'loop':
        visit(stmt);
        forEachLoop(stmt.body, visit);
        break;
      case 'if':
        forEachLoop(stmt.then, visit);
        if (stmt.else !== null) forEachLoop(stmt.else, visit);
        break;
      case 'while':
        forEachLoop(stmt.body, visit);
        break;
      case 'match':
        for (const arm of stmt.arms) forEachLoop(arm.body, visit);
        break;
      default:
        break;
    }
  }
}

function timingItems(robot: RobotDecl, profile: HardwareProfile): HardwareItem[] {
  const items: HardwareItem[] = [];
  const p = profile.name;
  const min = `${p} minimum period ${formatNumber(profile.minPeriodMs)} ms`;
  let cpu = 0;
  let counted = 0;
  for (const period of robotPeriods(robot)) {
    const ms = toMilliseconds(period.every);
    if (ms === null || ms <= 0) {
      items.push(item('timing', 'error', `${period.label} period ${period.every.text} is not a positive time`, period.loc));
      continue;
    }
    items.push(
      ms < profile.minPeriodMs
        ? item('timing', 'error', `${period.label} period ${formatNumber(ms)} ms is shorter than ${min}`, period.loc)
        : item('timing', 'pass', `${period.label} period ${formatNumber(ms)} ms meets ${min}`, period.loc),
    );
    cpu += cpuPercent(ms);
    counted += 1;
  }
  if (counted > 0) {
    const load = `Aggregate CPU load ${formatNumber(cpu)}% on ${p}`;
    if (cpu > 100) items.push(item('timing', 'error', `${load} exceeds 100%`, robot.loc));
    else if (cpu > 80) items.push(item('timing', 'warning', `${load} exceeds 80%`, robot.loc));
    else items.push(item('timing', 'pass', load, robot.loc));
  }
  return items;
}

// ---------------------------------------------------------------------------
// AI models

function aiModelItems(robot: RobotDecl, profile: HardwareProfile): HardwareItem[] {
  const items: HardwareItem[] = [];
  const p = profile.name;
  for (const model of robot.aiModels) {
    const label = `AI model '${model.name}'`;
    const before = items.length;
    const memory = model.config['memory_required'];
    if (memory !== undefined) {
      const mb = megabytesOf(memory);
      if (mb === null || profile.memoryMb === null) {
        items.push(item('ai_model', 'warning', `${label} memory requirement cannot be verified against ${p}`, model.loc));
      } else if (mb > profile.memoryMb) {
        items.push(item('ai_model', 'error', `${label} needs ${formatNumber(mb)} MB, more than ${p} memory ${formatNumber(profile.memoryMb)} MB`, model.loc));
      } else {
        items.push(item('ai_model', 'pass', `${label} memory ${formatNumber(mb)} MB fits ${p}`, model.loc));
      }
    }
    const gpu = model.config['gpu_required'];
    if (gpu === true || gpu === 'true') {
      items.push(
        hasGpu(profile)
          ? item('ai_model', 'pass', `${label} GPU requirement met by ${p}`, model.loc)
          : item('ai_model', 'error', `${label} requires a GPU but ${p} has none`, model.loc),
      );
    }
    if (items.length === before) items.push(item('ai_model', 'pass', `${label} declares no hardware requirements`, model.loc));
  }
  return items;
}

function megabytesOf(value: string | number | boolean | Quantity): number | null {
  if (typeof value === 'number') return value;
  if (typeof value === 'object') return toMegabytes(value);
  if (typeof value !== 'string') return null;
  const m = /^\s*([0-9]+(?:\.[0-9]+)?)\s*(GB|MB|KB)?\s*$/i.exec(value);
  if (m === null) return null;
  const n = Number(m[1]);
  const unit = (m[2] ?? 'MB').toUpperCase();
  return unit === 'GB' ? n * 1024 : unit === 'KB' ? n / 1024 : n;
}

// ---------------------------------------------------------------------------
// Built-in adapters

const ADAPTERS: ReadonlyArray<{ name: string; test: RegExp }> = [
  { name: 'serial', test: /^\/dev\/tty/ },
  { name: 'video (V4L2)', test: /^\/dev\/video/ },
  { name: 'I2C', test: /^(\/dev\/)?i2c-?\d*/ },
  { name: 'SPI', test: /^(\/dev\/)?spi/ },
  { name: 'CAN', test: /^v?can\d+$/ },
  { name: 'MQTT', test: /^mqtts?:\/\// },
  { name: 'RTSP', test: /^rtsps?:\/\// },
  { name: 'HTTP', test: /^https?:\/\// },
  { name: 'WebSocket', test: /^wss?:\/\// },
  { name: 'TCP', test: /^tcp:\/\// },
  { name: 'UDP', test: /^udp:\/\// },
];

function adapterFor(endpoint: string): string | null {
  return ADAPTERS.find((a) => a.test.test(endpoint))?.name ?? null;
}

function adapterItems(robot: RobotDecl): HardwareItem[] {
  const items: HardwareItem[] = [];
  for (const s of robot.sensors) {
    if (s.driver) {
      // The driver clause names the part (docs/program-language.md §4.1 "Forms added in issue 18"): reported so the
      // verification shows which vendor part each sensor type is realised by.
      items.push(item('driver', 'pass', `Sensor '${s.name}' (${s.type}) uses driver ${s.driver.vendor}.${s.driver.model} (vendor ${s.driver.vendor}, model ${s.driver.model})`, s.loc));
    }
    if (s.source === null) continue;
    const adapter = adapterFor(s.source);
    if (adapter !== null) items.push(item('adapter', 'pass', `Built-in ${adapter} adapter for sensor '${s.name}' (${s.source})`, s.loc));
  }
  for (const bus of robot.buses) {
    const adapter = adapterFor(bus);
    if (adapter !== null) items.push(item('adapter', 'pass', `Built-in ${adapter} adapter for bus '${bus}'`, robot.loc));
  }
  return items;
}

// ---------------------------------------------------------------------------
// Topic bandwidth

const IMAGE_PAYLOAD_BYTES = 640 * 480 * 3;
const POINT_CLOUD_PAYLOAD_BYTES = 1024 * 1024;
const DEFAULT_PAYLOAD_BYTES = 1024;

function payloadBytes(type: string, qos: Record<string, Quantity | string>): number {
  for (const key of ['size', 'payload', 'payload_size', 'message_size']) {
    const value = qos[key];
    if (value !== undefined && typeof value === 'object') {
      const mb = toMegabytes(value);
      if (mb !== null) return mb * 1024 * 1024;
    }
  }
  if (/image|frame|video|camera/i.test(type)) return IMAGE_PAYLOAD_BYTES;
  if (/pointcloud|point_cloud|scan/i.test(type)) return POINT_CLOUD_PAYLOAD_BYTES;
  return DEFAULT_PAYLOAD_BYTES;
}

function topicBandwidthItems(robot: RobotDecl, profile: HardwareProfile): HardwareItem[] {
  const items: HardwareItem[] = [];
  const p = profile.name;
  for (const topic of robot.topics) {
    // Published topics, and topics declared without a direction (`topic t: T { rate: 5 Hz; }`), which
    // the robot publishes to (docs/program-language.md §4.1 "Forms added in issue 18"); subscriptions cost the robot no uplink.
    if (topic.direction === 'subscribe') continue;
    const rate = topic.qos['rate'];
    if (rate === undefined || typeof rate !== 'object') continue;
    const hz = toHertz(rate);
    if (hz === null) continue;
    const mbps = (hz * payloadBytes(topic.type, topic.qos) * 8) / 1_000_000;
    const label = `Topic '${topic.name}' needs ${formatNumber(mbps)} Mbps at ${rate.text}`;
    if (profile.bandwidthMbps === null) {
      items.push(item('bandwidth', 'warning', `${label}; ${p} bandwidth unknown`, topic.loc));
    } else if (mbps > profile.bandwidthMbps) {
      items.push(item('bandwidth', 'error', `${label}, more than ${p} bandwidth ${formatNumber(profile.bandwidthMbps)} Mbps`, topic.loc));
    } else {
      items.push(item('bandwidth', 'pass', `${label} of ${p} bandwidth ${formatNumber(profile.bandwidthMbps)} Mbps`, topic.loc));
    }
  }
  return items;
}
