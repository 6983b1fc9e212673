import {
  discoverMesh,
  findMeshCapability,
  getMeshGraph,
  getMeshHealth,
  getMeshMergeReport,
  getMeshNodes,
  getMeshPartitions,
  getMeshRoutes,
  getMeshTopology,
  simulateMeshPartition,
} from '../../api/domains/mesh.js';
import { API_VERSION } from '../../api/versions.js';
import { handlersFor } from '../core/handlers.js';

const on = handlersFor(['mesh']);

/** The entity mesh; the logic is the mesh service's (`mesh-service.ts`). */
export const meshHandlers = [
  on(getMeshTopology, async (_i, ctx) => ({ version: API_VERSION, ...(await (await ctx.services.mesh.get()).topology()) })),
  on(getMeshNodes, async (_i, ctx) => ({ version: API_VERSION, ...(await (await ctx.services.mesh.get()).nodes()) })),
  on(getMeshRoutes, async ({ query }, ctx) => ({ version: API_VERSION, ...(await (await ctx.services.mesh.get()).routes(query)) })),
  on(getMeshPartitions, async (_i, ctx) => ({ version: API_VERSION, ...(await (await ctx.services.mesh.get()).partitions()) })),
  on(getMeshHealth, async (_i, ctx) => ({ version: API_VERSION, ...(await (await ctx.services.mesh.get()).health()) })),
  on(getMeshGraph, async (_i, ctx) => ({ version: API_VERSION, ...(await (await ctx.services.mesh.get()).graph()) })),
  on(getMeshMergeReport, async (_i, ctx) => ({ version: API_VERSION, ...(await (await ctx.services.mesh.get()).mergeReport()) })),
  on(discoverMesh, async ({ body }, ctx) => ({ version: API_VERSION, ...(await (await ctx.services.mesh.get()).discover(body.sources)) })),
  on(findMeshCapability, async ({ body }, ctx) => ({ version: API_VERSION, ...(await (await ctx.services.mesh.get()).findCapability(body.capability)) })),
  on(simulateMeshPartition, async ({ body }, ctx) => ({ version: API_VERSION, ...(await (await ctx.services.mesh.get()).simulatePartition(body.entity_ids)) })),
];
