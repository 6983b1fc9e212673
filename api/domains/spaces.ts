import * as z from 'zod';
import { defineSpec, type RpcRequestKind } from '../spec.js';

/**
 * Smart spaces (docs/spaces.md): facilities, zones, energy systems and emergency status, computed
 * from the configuration's `[[facilities]]` tree, the device pool, live device telemetry and the
 * alert and incident stores. All reads are open (read-auth policy applies); nothing is stored.
 */
export const facilityQuerySchema = z.lazy(() => z.object({ facility_id: z.string().max(256).optional() }));
export type FacilityQuery = z.infer<typeof facilityQuerySchema>;

const read = (id: string, path: string, summary: string, rpc: string, request: RpcRequestKind, cli: string[]) =>
  defineSpec({
    id,
    group: 'spaces',
    summary,
    method: 'GET',
    path,
    access: { kind: 'read' },
    rpc: { name: rpc, request },
    cli,
  });

const readByFacility = (id: string, path: string, summary: string, rpc: string, cli: string[]) =>
  defineSpec<Record<string, never>, FacilityQuery>({
    id,
    group: 'spaces',
    summary,
    method: 'GET',
    path,
    access: { kind: 'read' },
    rpc: { name: rpc, request: 'QueryRequest' },
    cli,
    query: facilityQuerySchema,
  });

export const listFacilities = read('listFacilities', '/v1/facilities', 'Configured facilities, their gateways and zones', 'ListFacilities', 'Empty', ['spaces', 'facilities']);
export const getFacilityReadiness = read('getFacilityReadiness', '/v1/facilities/{id}/readiness', "A facility's readiness over eight dimensions, from its own devices, telemetry and alerts", 'GetFacilityReadiness', 'EntityIdRequest', ['spaces', 'facility-readiness']);
export const getFacilityHealth = read('getFacilityHealth', '/v1/facilities/{id}/health', "Health of a facility's devices in the pool", 'GetFacilityHealth', 'EntityIdRequest', ['spaces', 'facility-health']);
export const getFacilitySecurity = read('getFacilitySecurity', '/v1/facilities/{id}/security', 'Security posture: policies, locks and cameras, tamper alerts, recent lock telemetry', 'GetFacilitySecurity', 'EntityIdRequest', ['spaces', 'facility-security']);
export const getFacilityFloorMap = read('getFacilityFloorMap', '/v1/facilities/{id}/floor-map', "A facility's zone tree with device counts", 'GetFacilityFloorMap', 'EntityIdRequest', ['spaces', 'floor-map']);
export const getZoneOccupancy = read('getZoneOccupancy', '/v1/zones/{id}/occupancy', "Zone occupancy from its people counters' and presence sensors' live telemetry", 'GetZoneOccupancy', 'EntityIdRequest', ['spaces', 'zone-occupancy']);
export const getZoneEnvironment = read('getZoneEnvironment', '/v1/zones/{id}/environment', "Zone CO2, temperature, humidity and air quality from its sensors' live telemetry", 'GetZoneEnvironment', 'EntityIdRequest', ['spaces', 'zone-environment']);
export const listEnergySystems = read('listEnergySystems', '/v1/energy/systems', 'Configured energy systems of every facility', 'ListEnergySystems', 'Empty', ['spaces', 'energy-systems']);
export const getEnergySystem = read('getEnergySystem', '/v1/energy/systems/{id}', "One energy system with its state from the device's live telemetry", 'GetEnergySystem', 'EntityIdRequest', ['spaces', 'energy-system']);
export const getEmergencyStatus = read('getEmergencyStatus', '/v1/emergency/status', 'Emergency status from open critical alerts and incidents, life-safety devices and gateways', 'GetEmergencyStatus', 'Empty', ['spaces', 'emergency']);
export const getSmartSpacesSummary = read('getSmartSpacesSummary', '/v1/smart-spaces/summary', 'Facilities, energy, emergency and per-facility readiness in one answer', 'GetSmartSpacesSummary', 'Empty', ['spaces', 'summary']);
export const listSmartSpacesDevices = readByFacility('listSmartSpacesDevices', '/v1/smart-spaces/devices', 'Smart-space devices (zone devices, gateways, robots, energy systems), optionally of one facility', 'ListSmartSpacesDevices', ['spaces', 'devices']);
export const listSmartSpacesGateways = readByFacility('listSmartSpacesGateways', '/v1/smart-spaces/gateways', 'Gateways with their reachability (a bounded TCP connect to each configured endpoint)', 'ListSmartSpacesGateways', ['spaces', 'gateways']);

export const spacesSpecs = [
  listFacilities,
  getFacilityReadiness,
  getFacilityHealth,
  getFacilitySecurity,
  getFacilityFloorMap,
  getZoneOccupancy,
  getZoneEnvironment,
  listEnergySystems,
  getEnergySystem,
  getEmergencyStatus,
  getSmartSpacesSummary,
  listSmartSpacesDevices,
  listSmartSpacesGateways,
];
