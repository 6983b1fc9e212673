import * as z from 'zod';
import { defineOperation, type Operation } from './legacy-operation.js';
import type { DeviceRecord } from '../devices/device-registry.js';
import type { Services } from '../runtime/services.js';
import { API_VERSION } from '../../api/versions.js';

function table(tree: Record<string, unknown> | undefined, key: string): Record<string, unknown> {
  const v = tree?.[key];
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

function devicesOf(s: Services, robotId: string): DeviceRecord[] {
  return s.devices.list().filter((d) => (d.assigned_robot ?? d.robot_id) === robotId);
}

/** Worst health of a robot's devices: a robot is only as healthy as what it depends on. */
function robotHealth(devices: DeviceRecord[]): string {
  const order = ['offline', 'degraded', 'unknown', 'healthy'];
  const states = devices.map((d) => (['failed', 'offline'].includes(d.lifecycle_state) ? 'offline' : d.lifecycle_state === 'degraded' ? 'degraded' : d.health_status));
  for (const s of order) if (states.includes(s as never)) return s;
  return 'unknown';
}

function robotsView(s: Services) {
  return (s.project.config?.robots ?? []).map((r) => {
    const devices = devicesOf(s, r.id);
    const raw = (r as unknown as { raw?: Record<string, unknown> }).raw;
    return {
      id: r.id,
      hardware_profile: r.hardware_profile,
      model: r.model,
      compute: r.compute,
      device_count: devices.length,
      devices: devices.map((d) => ({ id: d.id, device_type: d.device_type, lifecycle_state: d.lifecycle_state, health_status: d.health_status })),
      health_status: devices.length ? robotHealth(devices) : 'unknown',
      ...(raw?.['location'] !== undefined ? { location: raw['location'] } : {}),
    };
  });
}

const POLICY_DEFAULTS = {
  assurance: { minimum_score: 70, require_recovery: true, require_resilience: true, require_mitigations: false, require_anomaly_handlers: false },
};

/** Fleet views and configured policies, computed from the project configuration and the device pool. */
export const fleetOperations: Operation[] = [
  defineOperation({
    id: 'getDeviceTree',
    group: 'fleet',
    summary: 'Fleet → robots → compute → devices, plus devices not bound to a robot',
    method: 'GET',
    path: '/v1/device-tree',
    access: { kind: 'read' },
    rpc: { name: 'GetDeviceTree', request: 'Empty' },
    cli: ['device-tree'],
    handler: (_i, ctx) => {
      const s = ctx.services;
      const bound = new Set<string>();
      const robots = (s.project.config?.robots ?? []).map((r) => {
        const devices = devicesOf(s, r.id);
        devices.forEach((d) => bound.add(d.id));
        return {
          id: r.id,
          kind: 'robot',
          hardware_profile: r.hardware_profile,
          compute: r.compute ? { ...r.compute, kind: 'compute' } : null,
          children: devices.map((d) => ({ id: d.id, kind: 'device', device_type: d.device_type, mount: d.mount, port: d.port, bus: d.bus, lifecycle_state: d.lifecycle_state, health_status: d.health_status })),
        };
      });
      const unbound = s.devices.list().filter((d) => !bound.has(d.id));
      return {
        version: API_VERSION,
        tree: { id: s.project.config?.fleetId ?? 'fleet', kind: 'fleet', children: robots },
        unassigned: unbound.map((d) => ({ id: d.id, kind: 'device', device_type: d.device_type, lifecycle_state: d.lifecycle_state, health_status: d.health_status })),
      };
    },
  }),
  defineOperation({
    id: 'getDeviceReports',
    group: 'fleet',
    summary: 'Per-device health, lifecycle, identity and freshness',
    method: 'GET',
    path: '/v1/device-reports',
    access: { kind: 'read' },
    rpc: { name: 'GetDeviceReports', request: 'Empty' },
    cli: ['device-reports'],
    handler: (_i, ctx) => {
      const now = Date.now();
      const reports = ctx.services.devices.list().map((d) => {
        const issues: string[] = [];
        if (d.health_status === 'offline') issues.push('offline');
        if (d.health_status === 'degraded') issues.push('degraded');
        if (d.lifecycle_state === 'quarantined') issues.push(`quarantined${d.quarantine_reason ? `: ${d.quarantine_reason}` : ''}`);
        if (d.transport && !d.firmware_version) issues.push('firmware version unknown');
        if (!d.trust_level) issues.push('no trust level');
        return {
          device_id: d.id,
          device_type: d.device_type,
          lifecycle_state: d.lifecycle_state,
          health_status: d.health_status,
          transport: d.transport,
          firmware_version: d.firmware_version,
          last_seen_ms: d.last_seen_ms,
          age_ms: d.last_seen_ms === null ? null : now - d.last_seen_ms,
          issues,
        };
      });
      // Link counters (reconnects, malformed frames, CRC errors) of every HAL attachment.
      return { version: API_VERSION, reports, count: reports.length, links: ctx.services.deviceHub.stats() };
    },
  }),
  defineOperation({
    id: 'getFailoverChains',
    group: 'fleet',
    summary: 'Redundant device groups in failover order, with the device that serves now',
    method: 'GET',
    path: '/v1/failover/chains',
    access: { kind: 'read' },
    rpc: { name: 'GetFailoverChains', request: 'Empty' },
    cli: ['failover', 'chains'],
    handler: (_i, ctx) => {
      const groups = new Map<string, DeviceRecord[]>();
      for (const d of ctx.services.devices.list()) if (d.redundant_group) groups.set(d.redundant_group, [...(groups.get(d.redundant_group) ?? []), d]);
      const chains = [...groups.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([group, members]) => {
          const ordered = members.sort((a, b) => (a.failover_priority ?? 1e9) - (b.failover_priority ?? 1e9) || a.id.localeCompare(b.id));
          const usable = (d: DeviceRecord) => d.health_status !== 'offline' && !['failed', 'quarantined', 'retired', 'offline'].includes(d.lifecycle_state);
          const serving = ordered.find(usable) ?? null;
          return {
            group,
            chain: ordered.map((d) => ({ device_id: d.id, priority: d.failover_priority, lifecycle_state: d.lifecycle_state, health_status: d.health_status, usable: usable(d) })),
            active_device: serving?.id ?? null,
            exhausted: serving === null,
          };
        });
      return { version: API_VERSION, chains, count: chains.length };
    },
  }),
  defineOperation({
    id: 'listRobots',
    group: 'fleet',
    summary: 'Robots of the fleet with their devices and health',
    method: 'GET',
    path: '/v1/robots',
    access: { kind: 'sensitive-read' },
    rpc: { name: 'ListRobots', request: 'Empty' },
    cli: ['robots'],
    handler: (_i, ctx) => ({ version: API_VERSION, robots: robotsView(ctx.services) }),
  }),
  defineOperation({
    id: 'listFleets',
    group: 'fleet',
    summary: 'Fleets known to this agent',
    method: 'GET',
    path: '/v1/fleets',
    access: { kind: 'sensitive-read' },
    rpc: { name: 'ListFleets', request: 'Empty' },
    cli: ['fleets'],
    handler: (_i, ctx) => {
      const s = ctx.services;
      const cfg = s.project.config;
      if (!cfg || (cfg.robots.length === 0 && !cfg.fleetId)) return { version: API_VERSION, fleets: [] };
      const robots = robotsView(s);
      return {
        version: API_VERSION,
        fleets: [
          {
            id: cfg.fleetId ?? 'fleet',
            robot_count: robots.length,
            robots: robots.map((r) => r.id),
            device_count: s.devices.list().length,
            health: { healthy: robots.filter((r) => r.health_status === 'healthy').length, degraded: robots.filter((r) => r.health_status === 'degraded').length, offline: robots.filter((r) => r.health_status === 'offline').length },
          },
        ],
      };
    },
  }),
  defineOperation({
    id: 'getFleetMap',
    group: 'fleet',
    summary: 'Where the robots are and how they are doing',
    method: 'GET',
    path: '/v1/fleet/map',
    access: { kind: 'sensitive-read' },
    cli: ['fleet', 'map'],
    handler: (_i, ctx) => {
      const s = ctx.services;
      const facilities = table(s.project.config?.tree, 'facilities');
      return {
        version: API_VERSION,
        fleet_id: s.project.config?.fleetId ?? null,
        robots: robotsView(s).map((r) => ({ id: r.id, health_status: r.health_status, device_count: r.device_count, location: (r as { location?: unknown }).location ?? null })),
        facilities: Object.keys(facilities).sort(),
      };
    },
  }),
  defineOperation<Record<string, never>, { package_name?: string | undefined }>({
    id: 'getTrustPackage',
    group: 'trust',
    summary: 'Trust score of the project packages: pinned versions, known providers, use by devices',
    method: 'GET',
    path: '/v1/trust/package',
    access: { kind: 'sensitive-read' },
    rpc: { name: 'GetTrustPackage', request: 'TrustPackageRequest' },
    cli: ['trust', 'package'],
    query: z.lazy(() => z.object({ package_name: z.string().max(200).optional() })),
    handler: ({ query }, ctx) => {
      const tree = ctx.services.project.config?.tree;
      const deps = table(tree, 'dependencies');
      const providers = table(tree, 'providers');
      const providerPackages = new Map<string, string>();
      for (const [name, p] of Object.entries(providers)) {
        const pkg = (p as Record<string, unknown>)?.['package'];
        if (typeof pkg === 'string') providerPackages.set(pkg, name);
      }
      const devices = ctx.services.devices.list();
      const names = Object.keys(deps).sort().filter((n) => !query.package_name || n === query.package_name);
      const packages = names.map((name) => {
        const spec = deps[name];
        const version = typeof spec === 'string' ? spec : typeof (spec as Record<string, unknown>)?.['version'] === 'string' ? String((spec as Record<string, unknown>)['version']) : null;
        const pinned = version !== null && /^=?\d+\.\d+\.\d+([-+].*)?$/.test(version);
        const provider = providerPackages.get(name) ?? null;
        const usedBy = provider ? devices.filter((d) => d.provider === provider).map((d) => d.id) : [];
        const factors = [
          { factor: 'version_declared', passed: version !== null, weight: 30 },
          { factor: 'version_pinned', passed: pinned, weight: 40 },
          { factor: 'provider_known', passed: provider !== null, weight: 30 },
        ];
        const score = factors.reduce((n, f) => n + (f.passed ? f.weight : 0), 0);
        return { package: name, version, provider, used_by_devices: usedBy, factors, score, trusted: score >= 70 };
      });
      const overall = packages.length ? Math.round(packages.reduce((n, p) => n + p.score, 0) / packages.length) : null;
      return { version: API_VERSION, packages, score: overall, trusted: overall !== null && overall >= 70, count: packages.length };
    },
  }),
  defineOperation({
    id: 'getAssuranceSummary',
    group: 'trust',
    summary: 'The assurance policy in force (configuration over defaults)',
    method: 'GET',
    path: '/v1/assurance/summary',
    access: { kind: 'read' },
    rpc: { name: 'GetAssuranceSummary', request: 'Empty' },
    cli: ['assurance', 'summary'],
    handler: (_i, ctx) => {
      const configured = table(ctx.services.project.config?.tree, 'assurance');
      const policy = { ...POLICY_DEFAULTS.assurance, ...pick(configured, Object.keys(POLICY_DEFAULTS.assurance)) };
      return { version: API_VERSION, policy, configured: Object.keys(pick(configured, Object.keys(POLICY_DEFAULTS.assurance))).sort(), config_loaded: ctx.services.project.config !== null };
    },
  }),
  defineOperation({
    id: 'getDiagnosisSummary',
    group: 'trust',
    summary: 'The diagnosis policy in force ([diagnosis] wins over [assurance])',
    method: 'GET',
    path: '/v1/diagnosis/summary',
    access: { kind: 'read' },
    rpc: { name: 'GetDiagnosisSummary', request: 'Empty' },
    cli: ['diagnosis', 'summary'],
    handler: (_i, ctx) => {
      const tree = ctx.services.project.config?.tree;
      const keys = ['require_mitigations', 'require_anomaly_handlers'];
      const fromAssurance = pick(table(tree, 'assurance'), keys);
      const fromDiagnosis = pick(table(tree, 'diagnosis'), keys);
      const policy = { require_mitigations: false, require_anomaly_handlers: false, ...fromAssurance, ...fromDiagnosis };
      const sources = Object.fromEntries(keys.map((k) => [k, k in fromDiagnosis ? 'diagnosis' : k in fromAssurance ? 'assurance' : 'default']));
      return { version: API_VERSION, policy, sources, config_loaded: tree !== undefined };
    },
  }),
];

function pick(t: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((k) => t[k] !== undefined).map((k) => [k, t[k]]));
}
