import {
  assignDevice,
  commandDevice,
  discoverDevices,
  getDevice,
  getDiscovery,
  listDevices,
  patchDevice,
  provisionDevice,
  provisionDeviceById,
  quarantineDevice,
  getReadinessImpact,
  runReadiness,
  trustDevice,
  updateDeviceFirmware,
} from '../../api/domains/devices.js';
import { API_VERSION } from '../../api/versions.js';
import { badRequest } from '../core/errors.js';
import { handlersFor } from '../core/handlers.js';
import type { CallContext } from '../core/operation.js';
import type { DeviceRecord } from './device-registry.js';
import { flashFirmware } from './firmware-flash.js';

const on = handlersFor(['devices', 'devicePool', 'deviceHub', 'project', 'alerts', 'settings', 'readinessRuns']);

function entry(d: DeviceRecord) {
  return {
    id: d.id,
    device_type: d.device_type,
    lifecycle_state: d.lifecycle_state,
    health_status: d.health_status,
    assigned_robot: d.assigned_robot ?? d.robot_id,
    last_seen_ms: d.last_seen_ms,
    provisioning_id: d.provisioning_id,
    logical_name: d.logical_name,
    trust_level: d.trust_level,
    protocol: d.protocol,
    transport: d.transport,
    firmware_version: d.firmware_version,
    source: d.source,
  };
}

const actor = (ctx: Pick<CallContext, 'principal'>) => ctx.principal?.user_id ?? ctx.principal?.key_id ?? 'operator';

/** The device pool's registry and lifecycle workflows, and the operations that reach a device through the HAL (docs/devices.md). */
export const deviceHandlers = [
  on(listDevices, (_i, ctx) => ({ version: API_VERSION, devices: ctx.services.devices.list().map(entry), summary: ctx.services.devices.summary() })),
  on(getDevice, ({ params }, ctx) => ({ version: API_VERSION, device: ctx.services.devices.require(params['id']!) })),
  on(patchDevice, ({ body, params }, ctx) => {
    const d = ctx.services.devices.transition(params['id']!, body.lifecycle_state, { override: body.override ?? false });
    return { version: API_VERSION, ok: true, device_id: d.id, lifecycle_state: d.lifecycle_state };
  }),
  on(assignDevice, ({ body, params }, ctx) => {
    const result = ctx.services.devicePool.assign(params['id']!, body.robot_id, body.override ?? false);
    if (!result.ok) throw badRequest(result.message);
    return { version: API_VERSION, result, persisted: true, mapping: { device_id: result.device_id, robot_id: body.robot_id } };
  }),
  on(quarantineDevice, ({ body, params }, ctx) => {
    const result = ctx.services.devicePool.quarantine(params['id']!, body.reason ?? `quarantined by ${actor(ctx)}`, body.override ?? false);
    return { version: API_VERSION, result, persisted: true };
  }),
  on(trustDevice, ({ params }, ctx) => ({ version: API_VERSION, result: ctx.services.devicePool.trust(params['id']!, actor(ctx)), persisted: true })),
  on(provisionDeviceById, ({ body, params }, ctx) => {
    const { report, device } = ctx.services.devicePool.provision(params['id']!, body.robot_id ?? null, actor(ctx));
    return { version: API_VERSION, ok: report.ready, report, device: entry(device) };
  }),
  on(provisionDevice, ({ body }, ctx) => {
    const { report } = ctx.services.devicePool.provision(body.device_id, body.robot_id ?? null, actor(ctx));
    return { version: API_VERSION, ok: report.ready, report };
  }),
  on(runReadiness, async (_i, ctx) => {
    const result = ctx.services.devicePool.readinessImpact();
    // Kept for GET /v1/readiness/impact (web panels read the last run; docs/devices.md § Readiness impact).
    await ctx.services.readinessRuns.record(result, ctx.principal?.key_id ?? 'anonymous');
    return { version: API_VERSION, ...result };
  }),
  on(getReadinessImpact, async (_i, ctx) => {
    const now = ctx.services.devicePool.readinessImpact();
    const { run, run_count } = await ctx.services.readinessRuns.last();
    if (!run) {
      return {
        version: API_VERSION,
        source: 'computed_now',
        note: 'no readiness run recorded yet (POST /v1/readiness/run): computed now from the device pool',
        ran_at: null,
        requested_by: null,
        run_count,
        ...now,
        changed_since_run: false,
      };
    }
    return {
      version: API_VERSION,
      source: 'last_run',
      ran_at: run.ran_at,
      requested_by: run.requested_by,
      run_count,
      ...run.result,
      // Whether the pool's impact differs now from what the run saw: the panel offers a re-run then.
      changed_since_run: JSON.stringify(now) !== JSON.stringify(run.result),
    };
  }),
  on(discoverDevices, async ({ body }, ctx) => {
    const s = ctx.services;
    const results = await s.deviceHub.discover(body.transports ?? [], body.timeout_ms ?? 1500);
    const registered = results.flatMap((r) =>
      r.matches.map((m) => {
        const d = s.devices.require(m.device_id);
        return { ok: true, device_id: d.id, lifecycle_state: d.lifecycle_state, message: m.new ? `registered from ${r.transport} discovery` : `already registered (${d.lifecycle_state})` };
      }),
    );
    return { version: API_VERSION, results, registered, installed_packages: s.project.config?.packages ?? [] };
  }),
  on(getDiscovery, async ({ query }, ctx) => {
    const [result] = await ctx.services.deviceHub.discover([query.transport ?? 'serial'], Math.min(10_000, Number(query.timeout_ms ?? 1000)));
    return { version: API_VERSION, discovery: result, installed_packages: ctx.services.project.config?.packages ?? [], tls: false };
  }),
  on(commandDevice, async ({ body, params }, ctx) => {
    const outcome = await ctx.services.deviceHub.sendCommand(params['id']!, body.name, body.args ?? {}, body.timeout_ms ?? 3000);
    return { version: API_VERSION, ok: outcome.status === 'ok', device_id: params['id'], command: body.name, ack: outcome };
  }),
  on(updateDeviceFirmware, async ({ body, params }, ctx) => {
    const image = Buffer.from(body.image_base64, 'base64');
    if (image.length === 0) throw badRequest('image_base64 decodes to an empty image');
    const s = ctx.services;
    // The same flash an OTA rollout does (firmware-flash.ts), which also keeps the image for a later rollback.
    const r = await flashFirmware({ deviceHub: s.deviceHub, devices: s.devices, alerts: s.alerts, stateDir: s.settings.stateDir }, params['id']!, new Uint8Array(image), body.version);
    return { version: API_VERSION, ok: r.ok, device_id: r.device_id, outcome: r.outcome, firmware_version: r.firmware_version, duration_ms: r.duration_ms };
  }),
];
