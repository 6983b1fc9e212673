import * as z from 'zod';
import { defineSpec } from '../spec.js';

/** Fleet views and configured policies (groups `fleet` and `trust`); the agent computes them in its fleet service. */
export const getDeviceTree = defineSpec({
  id: 'getDeviceTree',
  group: 'fleet',
  summary: 'Fleet → robots → compute → devices, plus devices not bound to a robot',
  method: 'GET',
  path: '/v1/device-tree',
  access: { kind: 'read' },
  rpc: { name: 'GetDeviceTree', request: 'Empty' },
  cli: ['device-tree'],
});

export const getDeviceReports = defineSpec({
  id: 'getDeviceReports',
  group: 'fleet',
  summary: 'Per-device health, lifecycle, identity and freshness',
  method: 'GET',
  path: '/v1/device-reports',
  access: { kind: 'read' },
  rpc: { name: 'GetDeviceReports', request: 'Empty' },
  cli: ['device-reports'],
});

export const getFailoverChains = defineSpec({
  id: 'getFailoverChains',
  group: 'fleet',
  summary: 'Redundant device groups in failover order, with the device that serves now',
  method: 'GET',
  path: '/v1/failover/chains',
  access: { kind: 'read' },
  rpc: { name: 'GetFailoverChains', request: 'Empty' },
  cli: ['failover', 'chains'],
});

export const listRobots = defineSpec({
  id: 'listRobots',
  group: 'fleet',
  summary: 'Robots of the fleet with their devices and health',
  method: 'GET',
  path: '/v1/robots',
  access: { kind: 'sensitive-read' },
  rpc: { name: 'ListRobots', request: 'Empty' },
  cli: ['robots'],
});

export const listFleets = defineSpec({
  id: 'listFleets',
  group: 'fleet',
  summary: 'Fleets known to this agent',
  method: 'GET',
  path: '/v1/fleets',
  access: { kind: 'sensitive-read' },
  rpc: { name: 'ListFleets', request: 'Empty' },
  cli: ['fleets'],
});

export const getFleetMap = defineSpec({
  id: 'getFleetMap',
  group: 'fleet',
  summary: 'Where the robots are and how they are doing',
  method: 'GET',
  path: '/v1/fleet/map',
  access: { kind: 'sensitive-read' },
  cli: ['fleet', 'map'],
});

export const getTrustPackage = defineSpec<Record<string, never>, { package_name?: string | undefined }>({
  id: 'getTrustPackage',
  group: 'trust',
  summary: 'Trust score of the project packages: pinned versions, known providers, use by devices',
  method: 'GET',
  path: '/v1/trust/package',
  access: { kind: 'sensitive-read' },
  rpc: { name: 'GetTrustPackage', request: 'TrustPackageRequest' },
  cli: ['trust', 'package'],
  query: z.lazy(() => z.object({ package_name: z.string().max(200).optional() })),
});

export const getAssuranceSummary = defineSpec({
  id: 'getAssuranceSummary',
  group: 'trust',
  summary: 'The assurance policy in force (configuration over defaults)',
  method: 'GET',
  path: '/v1/assurance/summary',
  access: { kind: 'read' },
  rpc: { name: 'GetAssuranceSummary', request: 'Empty' },
  cli: ['assurance', 'summary'],
});

export const getDiagnosisSummary = defineSpec({
  id: 'getDiagnosisSummary',
  group: 'trust',
  summary: 'The diagnosis policy in force ([diagnosis] wins over [assurance])',
  method: 'GET',
  path: '/v1/diagnosis/summary',
  access: { kind: 'read' },
  rpc: { name: 'GetDiagnosisSummary', request: 'Empty' },
  cli: ['diagnosis', 'summary'],
});

export const fleetSpecs = [
  getDeviceTree,
  getDeviceReports,
  getFailoverChains,
  listRobots,
  listFleets,
  getFleetMap,
  getTrustPackage,
  getAssuranceSummary,
  getDiagnosisSummary,
];
