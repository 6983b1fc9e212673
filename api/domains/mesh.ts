import * as z from 'zod';
import { defineSpec } from '../spec.js';

const discoverBody = z.lazy(() => z.object({ sources: z.array(z.string().max(40)).max(20).optional() }));
const capabilityBody = z.lazy(() => z.object({ capability: z.string().max(200).optional() }));
const partitionBody = z.lazy(() => z.object({ entity_ids: z.array(z.string().max(200)).max(1000).optional() }));
const routesQuery = z.lazy(() => z.object({ source: z.string().max(200).optional(), target: z.string().max(200).optional() }));

/**
 * The entity mesh (docs/mesh.md): the communication view of the fleet built from the entity registry
 * and the persisted mesh store (discovered nodes, route history, partition events).
 */
export const getMeshTopology = defineSpec({
  id: 'getMeshTopology',
  group: 'mesh',
  summary: 'Mesh nodes (after coordinator election), links, coordinator and partitions',
  method: 'GET',
  path: '/v1/mesh/topology',
  access: { kind: 'read' },
  rpc: { name: 'GetMeshTopology', request: 'Empty' },
  cli: ['mesh', 'topology'],
});

export const getMeshNodes = defineSpec({
  id: 'getMeshNodes',
  group: 'mesh',
  summary: 'Mesh nodes in id order: registry entities merged with discovered nodes',
  method: 'GET',
  path: '/v1/mesh/nodes',
  access: { kind: 'read' },
  rpc: { name: 'GetMeshNodes', request: 'Empty' },
  cli: ['mesh', 'nodes'],
});

export const getMeshRoutes = defineSpec<Record<string, never>, z.infer<typeof routesQuery>>({
  id: 'getMeshRoutes',
  group: 'mesh',
  summary: 'Trust-weighted route from source to target (recorded in the route history), or the route history',
  method: 'GET',
  path: '/v1/mesh/routes',
  access: { kind: 'read' },
  rpc: { name: 'GetMeshRoutes', request: 'QueryRequest' },
  cli: ['mesh', 'routes'],
  query: routesQuery,
});

export const getMeshPartitions = defineSpec({
  id: 'getMeshPartitions',
  group: 'mesh',
  summary: 'Partition events: detected from the current topology and kept (newest last)',
  method: 'GET',
  path: '/v1/mesh/partitions',
  access: { kind: 'read' },
  rpc: { name: 'GetMeshPartitions', request: 'Empty' },
  cli: ['mesh', 'partitions'],
});

export const getMeshHealth = defineSpec({
  id: 'getMeshHealth',
  group: 'mesh',
  summary: 'Mesh health: reachability, degraded links, partitions, components, coordinator, trust, latency',
  method: 'GET',
  path: '/v1/mesh/health',
  access: { kind: 'read' },
  rpc: { name: 'GetMeshHealth', request: 'Empty' },
  cli: ['mesh', 'health'],
});

export const getMeshGraph = defineSpec({
  id: 'getMeshGraph',
  group: 'mesh',
  summary: 'The mesh as a graph of nodes and edges',
  method: 'GET',
  path: '/v1/mesh/graph',
  access: { kind: 'read' },
  rpc: { name: 'GetMeshGraph', request: 'Empty' },
  cli: ['mesh', 'graph'],
});

export const getMeshMergeReport = defineSpec({
  id: 'getMeshMergeReport',
  group: 'mesh',
  summary: 'Merge preview over the active partitions and the stored versus current nodes (no state change)',
  method: 'GET',
  path: '/v1/mesh/merge-report',
  access: { kind: 'read' },
  rpc: { name: 'GetMeshMergeReport', request: 'Empty' },
  cli: ['mesh', 'merge-report'],
});

export const discoverMesh = defineSpec<z.infer<typeof discoverBody>>({
  id: 'discoverMesh',
  group: 'mesh',
  summary: 'Discover mesh nodes (registry, entity graph, live MQTT) and store them',
  method: 'POST',
  path: '/v1/mesh/discover',
  access: { kind: 'action', action: 'Provision' },
  rpc: { name: 'DiscoverMesh', request: 'JsonBodyRequest' },
  cli: ['mesh', 'discover'],
  body: discoverBody,
});

export const findMeshCapability = defineSpec<z.infer<typeof capabilityBody>>({
  id: 'findMeshCapability',
  group: 'mesh',
  summary: 'Mesh nodes advertising a capability (one entry per entity)',
  method: 'POST',
  path: '/v1/mesh/find-capability',
  access: { kind: 'read' },
  rpc: { name: 'FindMeshCapability', request: 'JsonBodyRequest' },
  cli: ['mesh', 'find-capability'],
  body: capabilityBody,
});

export const simulateMeshPartition = defineSpec<z.infer<typeof partitionBody>>({
  id: 'simulateMeshPartition',
  group: 'mesh',
  summary: 'What a partition isolating the given entities would cut off and pause (nothing stored)',
  method: 'POST',
  path: '/v1/mesh/simulate-partition',
  access: { kind: 'read' },
  rpc: { name: 'SimulateMeshPartition', request: 'JsonBodyRequest' },
  cli: ['mesh', 'simulate-partition'],
  body: partitionBody,
});

export const meshSpecs = [
  getMeshTopology,
  getMeshNodes,
  getMeshRoutes,
  getMeshPartitions,
  getMeshHealth,
  getMeshGraph,
  getMeshMergeReport,
  discoverMesh,
  findMeshCapability,
  simulateMeshPartition,
];
