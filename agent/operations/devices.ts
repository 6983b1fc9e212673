import * as z from 'zod';
import { badRequest } from '../core/errors.js';
import { defineOperation, type Operation } from './legacy-operation.js';
import type { DeviceRecord } from '../devices/device-registry.js';
import { DEVICE_LIFECYCLE_STATES } from '../devices/lifecycle.js';
import { API_VERSION } from '../../api/versions.js';

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

const actor = (ctx: { principal: { key_id: string; user_id: string | null } | null }) => ctx.principal?.user_id ?? ctx.principal?.key_id ?? 'operator';

const lifecycleBody = z.lazy(() => z.object({ lifecycle_state: z.enum(DEVICE_LIFECYCLE_STATES), override: z.boolean().optional() }));
const assignBody = z.lazy(() => z.object({ robot_id: z.string().min(1, 'missing robot_id').max(200), override: z.boolean().optional() }));
const quarantineBody = z.lazy(() => z.object({ reason: z.string().max(500).optional(), override: z.boolean().optional() }));
const provisionBody = z.lazy(() => z.object({ robot_id: z.string().min(1).max(200).optional() }));
const provisionAnyBody = z.lazy(() => z.object({ device_id: z.string().min(1, 'missing device_id').max(200), robot_id: z.string().min(1).max(200).optional() }));

/** The device pool's registry and lifecycle workflows (api-behaviour §10.4). */
export const deviceOperations: Operation[] = [
  defineOperation({
    id: 'listDevices',
    group: 'devices',
    summary: 'The device pool: configured and discovered devices',
    method: 'GET',
    path: '/v1/devices',
    access: { kind: 'sensitive-read' },
    rpc: { name: 'ListDevices', request: 'Empty' },
    cli: ['devices', 'list'],
    handler: (_i, ctx) => ({ version: API_VERSION, devices: ctx.services.devices.list().map(entry), summary: ctx.services.devices.summary() }),
  }),
  defineOperation({
    id: 'getDevice',
    group: 'devices',
    summary: 'One device with its full identity record',
    method: 'GET',
    path: '/v1/devices/{id}',
    access: { kind: 'sensitive-read' },
    rpc: { name: 'GetDevice', request: 'DeviceIdRequest' },
    cli: ['devices', 'get'],
    handler: ({ params }, ctx) => ({ version: API_VERSION, device: ctx.services.devices.require(params['id']!) }),
  }),
  defineOperation<z.infer<typeof lifecycleBody>>({
    id: 'patchDevice',
    group: 'devices',
    summary: 'Move a device through its lifecycle (refused transitions: 409 unless override)',
    method: 'PATCH',
    path: '/v1/devices/{id}',
    access: { kind: 'action', action: 'Provision' },
    rpc: { name: 'PatchDevice', request: 'DeviceBodyRequest' },
    cli: ['devices', 'set-state'],
    body: lifecycleBody,
    handler: ({ body, params }, ctx) => {
      const d = ctx.services.devices.transition(params['id']!, body.lifecycle_state, { override: body.override ?? false });
      return { version: API_VERSION, ok: true, device_id: d.id, lifecycle_state: d.lifecycle_state };
    },
  }),
  defineOperation<z.infer<typeof assignBody>>({
    id: 'assignDevice',
    group: 'devices',
    summary: 'Assign a verified device to a robot',
    method: 'POST',
    path: '/v1/devices/{id}/assign',
    access: { kind: 'action', action: 'Provision' },
    rpc: { name: 'DeviceAssign', request: 'DeviceBodyRequest' },
    cli: ['devices', 'assign'],
    body: assignBody,
    handler: ({ body, params }, ctx) => {
      const result = ctx.services.devicePool.assign(params['id']!, body.robot_id, body.override ?? false);
      if (!result.ok) throw badRequest(result.message);
      return { version: API_VERSION, result, persisted: true, mapping: { device_id: result.device_id, robot_id: body.robot_id } };
    },
  }),
  defineOperation<z.infer<typeof quarantineBody>>({
    id: 'quarantineDevice',
    group: 'devices',
    summary: 'Take a device out of service for inspection',
    method: 'POST',
    path: '/v1/devices/{id}/quarantine',
    access: { kind: 'action', action: 'Provision' },
    rpc: { name: 'DeviceQuarantine', request: 'DeviceIdRequest' },
    cli: ['devices', 'quarantine'],
    body: quarantineBody,
    handler: ({ body, params }, ctx) => {
      const result = ctx.services.devicePool.quarantine(params['id']!, body.reason ?? `quarantined by ${actor(ctx)}`, body.override ?? false);
      return { version: API_VERSION, result, persisted: true };
    },
  }),
  defineOperation({
    id: 'trustDevice',
    group: 'devices',
    summary: 'Vouch for a device (discovered or quarantined devices become verified)',
    method: 'POST',
    path: '/v1/devices/{id}/trust',
    access: { kind: 'action', action: 'Approve' },
    rpc: { name: 'DeviceTrust', request: 'DeviceIdRequest' },
    cli: ['devices', 'trust'],
    body: z.lazy(() => z.object({})),
    handler: ({ params }, ctx) => ({ version: API_VERSION, result: ctx.services.devicePool.trust(params['id']!, actor(ctx)), persisted: true }),
  }),
  defineOperation<z.infer<typeof provisionBody>>({
    id: 'provisionDeviceById',
    group: 'devices',
    summary: 'Run the provisioning workflow for a device (ready: active; not ready: quarantined + critical alert)',
    method: 'POST',
    path: '/v1/devices/{id}/provision',
    access: { kind: 'action', action: 'Provision' },
    rpc: { name: 'DeviceProvision', request: 'DeviceBodyRequest' },
    cli: ['devices', 'provision'],
    body: provisionBody,
    handler: ({ body, params }, ctx) => {
      const { report, device } = ctx.services.devicePool.provision(params['id']!, body.robot_id ?? null, actor(ctx));
      return { version: API_VERSION, ok: report.ready, report, device: entry(device) };
    },
  }),
  defineOperation<z.infer<typeof provisionAnyBody>>({
    id: 'provisionDevice',
    group: 'devices',
    summary: 'Provisioning workflow with the device named in the body',
    method: 'POST',
    path: '/v1/provision',
    access: { kind: 'action', action: 'Provision' },
    rpc: { name: 'ProvisionDevice', request: 'JsonBodyRequest' },
    cli: ['provision'],
    body: provisionAnyBody,
    handler: ({ body }, ctx) => {
      const { report } = ctx.services.devicePool.provision(body.device_id, body.robot_id ?? null, actor(ctx));
      return { version: API_VERSION, ok: report.ready, report };
    },
  }),
  defineOperation({
    id: 'runReadiness',
    group: 'devices',
    summary: "Device-pool readiness impact: which robots' devices block the mission",
    method: 'POST',
    path: '/v1/readiness/run',
    access: { kind: 'read' },
    rpc: { name: 'EvaluateReadiness', request: 'ReadinessRequest' },
    cli: ['readiness', 'run'],
    body: z.lazy(() => z.object({}).passthrough()),
    handler: (_i, ctx) => ({ version: API_VERSION, ...ctx.services.devicePool.readinessImpact() }),
  }),
];

const discoverBody = z.lazy(() => z.object({
  transports: z.array(z.string().min(1).max(40)).max(20).optional(),
  timeout_ms: z.number().int().min(50).max(60_000).optional(),
  subnet: z.string().max(100).optional(),
}));
const commandBody = z.lazy(() => z.object({
  name: z.string().min(1, 'missing name').max(64),
  args: z.record(z.string(), z.unknown()).optional(),
  timeout_ms: z.number().int().min(50).max(60_000).optional(),
}));
const firmwareBody = z.lazy(() => z.object({
  version: z.string().min(1, 'missing version').max(64),
  image_base64: z.string().min(1, 'missing image_base64').max(8 * 1024 * 1024),
}));

/** Discovery and the operations that reach a device through the HAL. */
export const halOperations: Operation[] = [
  defineOperation<z.infer<typeof discoverBody>>({
    id: 'discoverDevices',
    group: 'devices',
    summary: 'Scan serial lines, CAN buses and the MQTT broker for devices; matches join the registry',
    method: 'POST',
    path: '/v1/devices/discover',
    access: { kind: 'action', action: 'Provision' },
    rpc: { name: 'RunDiscovery', request: 'JsonBodyRequest' },
    cli: ['devices', 'discover'],
    body: discoverBody,
    handler: async ({ body }, ctx) => {
      const s = ctx.services;
      const results = await s.deviceHub.discover(body.transports ?? [], body.timeout_ms ?? 1500);
      const registered = results.flatMap((r) =>
        r.matches.map((m) => {
          const d = s.devices.require(m.device_id);
          return { ok: true, device_id: d.id, lifecycle_state: d.lifecycle_state, message: m.new ? `registered from ${r.transport} discovery` : `already registered (${d.lifecycle_state})` };
        }),
      );
      return { version: API_VERSION, results, registered, installed_packages: s.project.config?.packages ?? [] };
    },
  }),
  defineOperation<Record<string, never>, { transport?: string | undefined; timeout_ms?: string | undefined }>({
    id: 'getDiscovery',
    group: 'devices',
    summary: 'One discovery scan of a single transport (read-only view of what answers)',
    method: 'GET',
    path: '/v1/discovery',
    access: { kind: 'read' },
    rpc: { name: 'DiscoverDevices', request: 'QueryRequest' },
    cli: ['discovery'],
    query: z.lazy(() => z.object({ transport: z.string().max(40).optional(), timeout_ms: z.string().regex(/^\d{2,5}$/, 'expected milliseconds').optional(), subnet: z.string().optional() })),
    handler: async ({ query }, ctx) => {
      const [result] = await ctx.services.deviceHub.discover([query.transport ?? 'serial'], Math.min(10_000, Number(query.timeout_ms ?? 1000)));
      return { version: API_VERSION, discovery: result, installed_packages: ctx.services.project.config?.packages ?? [], tls: false };
    },
  }),
  defineOperation<z.infer<typeof commandBody>>({
    id: 'commandDevice',
    group: 'devices',
    summary: 'Send a command to a device and wait for its acknowledgement',
    method: 'POST',
    path: '/v1/devices/{id}/command',
    access: { kind: 'action', action: 'Operate' },
    cli: ['devices', 'command'],
    body: commandBody,
    handler: async ({ body, params }, ctx) => {
      const outcome = await ctx.services.deviceHub.sendCommand(params['id']!, body.name, body.args ?? {}, body.timeout_ms ?? 3000);
      return { version: API_VERSION, ok: outcome.status === 'ok', device_id: params['id'], command: body.name, ack: outcome };
    },
  }),
  defineOperation<z.infer<typeof firmwareBody>>({
    id: 'updateDeviceFirmware',
    group: 'devices',
    summary: 'Send a firmware image in verified chunks; the device activates it or rolls back',
    method: 'POST',
    path: '/v1/devices/{id}/firmware',
    access: { kind: 'action', action: 'Deploy' },
    cli: ['devices', 'firmware'],
    body: firmwareBody,
    handler: async ({ body, params }, ctx) => {
      const image = Buffer.from(body.image_base64, 'base64');
      if (image.length === 0) throw badRequest('image_base64 decodes to an empty image');
      const outcome = await ctx.services.deviceHub.updateFirmware(params['id']!, new Uint8Array(image), body.version);
      // The device reports the version it runs after the update (the new one, or the old one after a rollback).
      if (outcome.version) ctx.services.devices.update(params['id']!, { firmware_version: outcome.version });
      const device = ctx.services.devices.require(params['id']!);
      if (outcome.result !== 'activated') {
        ctx.services.alerts.raise({
          alert_type: 'recovery_failed',
          severity: 'warning',
          source: 'firmware-update',
          message: `firmware ${body.version} for ${device.id} was not activated (${outcome.result}): ${outcome.detail}`,
        });
      }
      return { version: API_VERSION, ok: outcome.result === 'activated', device_id: device.id, outcome, firmware_version: device.firmware_version };
    },
  }),
];
