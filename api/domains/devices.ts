import * as z from 'zod';
import { defineSpec } from '../spec.js';
import { DEVICE_LIFECYCLE_STATES } from '../vocabulary/devices.js';

const lifecycleBody = z.lazy(() => z.object({ lifecycle_state: z.enum(DEVICE_LIFECYCLE_STATES), override: z.boolean().optional() }));
const assignBody = z.lazy(() => z.object({ robot_id: z.string().min(1, 'missing robot_id').max(200), override: z.boolean().optional() }));
const quarantineBody = z.lazy(() => z.object({ reason: z.string().max(500).optional(), override: z.boolean().optional() }));
const provisionBody = z.lazy(() => z.object({ robot_id: z.string().min(1).max(200).optional() }));
const provisionAnyBody = z.lazy(() => z.object({ device_id: z.string().min(1, 'missing device_id').max(200), robot_id: z.string().min(1).max(200).optional() }));

/** The device pool's registry and lifecycle workflows (docs/devices.md § Lifecycle and workflows). */
export const listDevices = defineSpec({
  id: 'listDevices',
  group: 'devices',
  summary: 'The device pool: configured and discovered devices',
  method: 'GET',
  path: '/v1/devices',
  access: { kind: 'sensitive-read' },
  rpc: { name: 'ListDevices', request: 'Empty' },
  cli: ['devices', 'list'],
});

export const getDevice = defineSpec({
  id: 'getDevice',
  group: 'devices',
  summary: 'One device with its full identity record',
  method: 'GET',
  path: '/v1/devices/{id}',
  access: { kind: 'sensitive-read' },
  rpc: { name: 'GetDevice', request: 'DeviceIdRequest' },
  cli: ['devices', 'get'],
});

export const patchDevice = defineSpec<z.infer<typeof lifecycleBody>>({
  id: 'patchDevice',
  group: 'devices',
  summary: 'Move a device through its lifecycle (refused transitions: 409 unless override)',
  method: 'PATCH',
  path: '/v1/devices/{id}',
  access: { kind: 'action', action: 'Provision' },
  rpc: { name: 'PatchDevice', request: 'DeviceBodyRequest' },
  cli: ['devices', 'set-state'],
  body: lifecycleBody,
});

export const assignDevice = defineSpec<z.infer<typeof assignBody>>({
  id: 'assignDevice',
  group: 'devices',
  summary: 'Assign a verified device to a robot',
  method: 'POST',
  path: '/v1/devices/{id}/assign',
  access: { kind: 'action', action: 'Provision' },
  rpc: { name: 'DeviceAssign', request: 'DeviceBodyRequest' },
  cli: ['devices', 'assign'],
  body: assignBody,
});

export const quarantineDevice = defineSpec<z.infer<typeof quarantineBody>>({
  id: 'quarantineDevice',
  group: 'devices',
  summary: 'Take a device out of service for inspection',
  method: 'POST',
  path: '/v1/devices/{id}/quarantine',
  access: { kind: 'action', action: 'Provision' },
  rpc: { name: 'DeviceQuarantine', request: 'DeviceIdRequest' },
  cli: ['devices', 'quarantine'],
  body: quarantineBody,
});

export const trustDevice = defineSpec({
  id: 'trustDevice',
  group: 'devices',
  summary: 'Vouch for a device (discovered or quarantined devices become verified)',
  method: 'POST',
  path: '/v1/devices/{id}/trust',
  access: { kind: 'action', action: 'Approve' },
  rpc: { name: 'DeviceTrust', request: 'DeviceIdRequest' },
  cli: ['devices', 'trust'],
  body: z.lazy(() => z.object({})),
});

export const provisionDeviceById = defineSpec<z.infer<typeof provisionBody>>({
  id: 'provisionDeviceById',
  group: 'devices',
  summary: 'Run the provisioning workflow for a device (ready: active; not ready: quarantined + critical alert)',
  method: 'POST',
  path: '/v1/devices/{id}/provision',
  access: { kind: 'action', action: 'Provision' },
  rpc: { name: 'DeviceProvision', request: 'DeviceBodyRequest' },
  cli: ['devices', 'provision'],
  body: provisionBody,
});

export const provisionDevice = defineSpec<z.infer<typeof provisionAnyBody>>({
  id: 'provisionDevice',
  group: 'devices',
  summary: 'Provisioning workflow with the device named in the body',
  method: 'POST',
  path: '/v1/provision',
  access: { kind: 'action', action: 'Provision' },
  rpc: { name: 'ProvisionDevice', request: 'JsonBodyRequest' },
  cli: ['provision'],
  body: provisionAnyBody,
});

export const runReadiness = defineSpec({
  id: 'runReadiness',
  group: 'devices',
  summary: "Device-pool readiness impact: which robots' devices block the mission",
  method: 'POST',
  path: '/v1/readiness/run',
  access: { kind: 'read' },
  rpc: { name: 'EvaluateReadiness', request: 'ReadinessRequest' },
  cli: ['readiness', 'run'],
  body: z.lazy(() => z.object({}).passthrough()),
});

/**
 * The last device-pool readiness impact `POST /v1/readiness/run` computed, kept across restarts
 * (docs/devices.md § Readiness impact); before any run it is computed now and says so (`source`).
 */
export const getReadinessImpact = defineSpec({
  id: 'getReadinessImpact',
  group: 'devices',
  summary: 'The last device-pool readiness impact of POST /v1/readiness/run (computed now when none ran yet)',
  method: 'GET',
  path: '/v1/readiness/impact',
  access: { kind: 'read' },
  rpc: { name: 'GetReadinessImpact', request: 'Empty' },
  cli: ['readiness', 'impact'],
});

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

/** Discovery and the operations that reach a device through the HAL (docs/devices.md § Reaching devices). */
export const discoverDevices = defineSpec<z.infer<typeof discoverBody>>({
  id: 'discoverDevices',
  group: 'devices',
  summary: 'Scan serial lines, CAN buses and the MQTT broker for devices; matches join the registry',
  method: 'POST',
  path: '/v1/devices/discover',
  access: { kind: 'action', action: 'Provision' },
  rpc: { name: 'RunDiscovery', request: 'JsonBodyRequest' },
  cli: ['devices', 'discover'],
  body: discoverBody,
});

export const getDiscovery = defineSpec<Record<string, never>, { transport?: string | undefined; timeout_ms?: string | undefined }>({
  id: 'getDiscovery',
  group: 'devices',
  summary: 'One discovery scan of a single transport (read-only view of what answers)',
  method: 'GET',
  path: '/v1/discovery',
  access: { kind: 'read' },
  rpc: { name: 'DiscoverDevices', request: 'QueryRequest' },
  cli: ['discovery'],
  query: z.lazy(() => z.object({ transport: z.string().max(40).optional(), timeout_ms: z.string().regex(/^\d{2,5}$/, 'expected milliseconds').optional(), subnet: z.string().optional() })),
});

export const commandDevice = defineSpec<z.infer<typeof commandBody>>({
  id: 'commandDevice',
  group: 'devices',
  summary: 'Send a command to a device and wait for its acknowledgement',
  method: 'POST',
  path: '/v1/devices/{id}/command',
  access: { kind: 'action', action: 'Operate' },
  cli: ['devices', 'command'],
  body: commandBody,
});

export const updateDeviceFirmware = defineSpec<z.infer<typeof firmwareBody>>({
  id: 'updateDeviceFirmware',
  group: 'devices',
  summary: 'Send a firmware image in verified chunks; the device activates it or rolls back',
  method: 'POST',
  path: '/v1/devices/{id}/firmware',
  access: { kind: 'action', action: 'Deploy' },
  cli: ['devices', 'firmware'],
  body: firmwareBody,
});

export const deviceSpecs = [
  listDevices,
  getDevice,
  patchDevice,
  assignDevice,
  quarantineDevice,
  trustDevice,
  provisionDeviceById,
  provisionDevice,
  runReadiness,
  getReadinessImpact,
  discoverDevices,
  getDiscovery,
  commandDevice,
  updateDeviceFirmware,
];
