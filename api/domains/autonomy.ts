import * as z from 'zod';
import { defineSpec } from '../spec.js';

/**
 * Resilient autonomy (docs/autonomy.md): reflexes and their traces, homeostasis, immunity, attention,
 * fusion, memory and maintenance windows. Every view is computed by the agent's autonomy service from
 * live state (device pool, telemetry store, entity registry, loaded program, persisted stores).
 */
export const listAutonomyReflexes = defineSpec({
  id: 'listAutonomyReflexes',
  group: 'autonomy',
  summary: 'Reflex catalogue: the built-in safety reflexes plus the kill switches and reflex-layer decision trees of the loaded program',
  method: 'GET',
  path: '/v1/autonomy/reflex',
  access: { kind: 'sensitive-read' },
  rpc: { name: 'ListAutonomyReflexes', request: 'Empty' },
  cli: ['autonomy', 'reflex'],
  cliAliases: [['reflex', 'list']],
});

export const listAutonomyReflexTraces = defineSpec({
  id: 'listAutonomyReflexTraces',
  group: 'autonomy',
  summary: 'Reflex firings recorded from incoming telemetry (persisted ring of 256, oldest first); catalogue examples only when none fired',
  method: 'GET',
  path: '/v1/autonomy/reflex/traces',
  access: { kind: 'sensitive-read' },
  rpc: { name: 'ListAutonomyReflexTraces', request: 'Empty' },
  cli: ['autonomy', 'reflex-traces'],
});

export const getAutonomyHomeostasis = defineSpec({
  id: 'getAutonomyHomeostasis',
  group: 'autonomy',
  summary: 'Vital metrics of the agent process, the host and every entity against the configured set points, with drift signals and corrections',
  method: 'GET',
  path: '/v1/autonomy/homeostasis',
  access: { kind: 'sensitive-read' },
  rpc: { name: 'GetAutonomyHomeostasis', request: 'Empty' },
  cli: ['autonomy', 'homeostasis'],
  cliAliases: [['homeostasis', 'check']],
});

export const getAutonomyImmunity = defineSpec({
  id: 'getAutonomyImmunity',
  group: 'autonomy',
  summary: 'Entities the immunity rules would quarantine (trust, tamper and spoofing signals), with the action and reasons',
  method: 'GET',
  path: '/v1/autonomy/immunity',
  access: { kind: 'sensitive-read' },
  rpc: { name: 'GetAutonomyImmunity', request: 'Empty' },
  cli: ['autonomy', 'immunity'],
});

export const getAutonomyAttention = defineSpec({
  id: 'getAutonomyAttention',
  group: 'autonomy',
  summary: 'Every entity ranked by live health, open alerts and incidents and recency, with suppression rules applied',
  method: 'GET',
  path: '/v1/autonomy/attention',
  access: { kind: 'sensitive-read' },
  rpc: { name: 'GetAutonomyAttention', request: 'Empty' },
  cli: ['autonomy', 'attention'],
});

export const getAutonomyFusion = defineSpec({
  id: 'getAutonomyFusion',
  group: 'autonomy',
  summary: 'Redundant sensors compared: live readings fused with staleness-decayed confidence, conflicts between them',
  method: 'GET',
  path: '/v1/autonomy/fusion',
  access: { kind: 'sensitive-read' },
  rpc: { name: 'GetAutonomyFusion', request: 'Empty' },
  cli: ['autonomy', 'fusion'],
});

export const getAutonomyMemory = defineSpec({
  id: 'getAutonomyMemory',
  group: 'autonomy',
  summary: 'What describes each entity: reflexes, working context, indexed traces and incidents, graph and procedures',
  method: 'GET',
  path: '/v1/autonomy/memory',
  access: { kind: 'sensitive-read' },
  rpc: { name: 'GetAutonomyMemory', request: 'Empty' },
  cli: ['autonomy', 'memory'],
});

export const listMaintenanceWindows = defineSpec({
  id: 'listMaintenanceWindows',
  group: 'autonomy',
  summary: 'Maintenance windows in store order',
  method: 'GET',
  path: '/v1/autonomy/maintenance/windows',
  access: { kind: 'sensitive-read' },
  cli: ['autonomy', 'maintenance', 'list'],
});

const windowBody = z.lazy(() =>
  z.object({
    id: z.string().min(1).max(200),
    start: z.string().min(1).max(64),
    end: z.string().min(1).max(64),
    activities: z.array(z.string().max(500)).max(100),
  }),
);

export const putMaintenanceWindow = defineSpec<z.infer<typeof windowBody>>({
  id: 'putMaintenanceWindow',
  group: 'autonomy',
  summary: 'Create or replace a maintenance window (upsert by id; RFC 3339 start before end)',
  method: 'POST',
  path: '/v1/autonomy/maintenance/windows',
  access: { kind: 'action', action: 'Operate' },
  cli: ['autonomy', 'maintenance', 'put'],
  body: windowBody,
});

export const autonomySpecs = [
  listAutonomyReflexes,
  listAutonomyReflexTraces,
  getAutonomyHomeostasis,
  getAutonomyImmunity,
  getAutonomyAttention,
  getAutonomyFusion,
  getAutonomyMemory,
  listMaintenanceWindows,
  putMaintenanceWindow,
];
