import {
  getEmergencyStatus,
  getEnergySystem,
  getFacilityFloorMap,
  getFacilityHealth,
  getFacilityReadiness,
  getFacilitySecurity,
  getSmartSpacesSummary,
  getZoneEnvironment,
  getZoneOccupancy,
  listEnergySystems,
  listFacilities,
  listSmartSpacesDevices,
  listSmartSpacesGateways,
} from '../../api/domains/spaces.js';
import { handlersFor } from '../core/handlers.js';

const on = handlersFor(['spaces']);

/** Smart spaces (docs/spaces.md). */
export const spacesHandlers = [
  on(listFacilities, async (_i, ctx) => (await ctx.services.spaces.get()).facilities()),
  on(getFacilityReadiness, async ({ params }, ctx) => (await ctx.services.spaces.get()).facilityReadiness(params['id']!)),
  on(getFacilityHealth, async ({ params }, ctx) => (await ctx.services.spaces.get()).facilityHealth(params['id']!)),
  on(getFacilitySecurity, async ({ params }, ctx) => (await ctx.services.spaces.get()).facilitySecurity(params['id']!)),
  on(getFacilityFloorMap, async ({ params }, ctx) => (await ctx.services.spaces.get()).floorMap(params['id']!)),
  on(getZoneOccupancy, async ({ params }, ctx) => (await ctx.services.spaces.get()).zoneOccupancy(params['id']!)),
  on(getZoneEnvironment, async ({ params }, ctx) => (await ctx.services.spaces.get()).zoneEnvironment(params['id']!)),
  on(listEnergySystems, async (_i, ctx) => (await ctx.services.spaces.get()).energySystems()),
  on(getEnergySystem, async ({ params }, ctx) => (await ctx.services.spaces.get()).energySystem(params['id']!)),
  on(getEmergencyStatus, async (_i, ctx) => (await ctx.services.spaces.get()).emergencyStatus()),
  on(getSmartSpacesSummary, async (_i, ctx) => (await ctx.services.spaces.get()).summary()),
  on(listSmartSpacesDevices, async ({ query }, ctx) => (await ctx.services.spaces.get()).devices(query.facility_id)),
  on(listSmartSpacesGateways, async ({ query }, ctx) => (await ctx.services.spaces.get()).gateways(query.facility_id)),
];
