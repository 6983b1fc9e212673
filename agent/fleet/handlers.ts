import {
  getAssuranceSummary,
  getDeviceReports,
  getDeviceTree,
  getDiagnosisSummary,
  getFailoverChains,
  getFleetMap,
  getTrustPackage,
  listFleets,
  listRobots,
} from '../../api/domains/fleet.js';
import { API_VERSION } from '../../api/versions.js';
import { handlersFor } from '../core/handlers.js';

const on = handlersFor(['fleet']);

/** Fleet views and configured policies; the logic is the fleet service's (`fleet-service.ts`). */
export const fleetHandlers = [
  on(getDeviceTree, (_i, ctx) => ({ version: API_VERSION, ...ctx.services.fleet.deviceTree() })),
  on(getDeviceReports, (_i, ctx) => ({ version: API_VERSION, ...ctx.services.fleet.deviceReports() })),
  on(getFailoverChains, (_i, ctx) => ({ version: API_VERSION, ...ctx.services.fleet.failoverChains() })),
  on(listRobots, (_i, ctx) => ({ version: API_VERSION, robots: ctx.services.fleet.robots() })),
  on(listFleets, (_i, ctx) => ({ version: API_VERSION, ...ctx.services.fleet.fleets() })),
  on(getFleetMap, (_i, ctx) => ({ version: API_VERSION, ...ctx.services.fleet.fleetMap() })),
  on(getTrustPackage, ({ query }, ctx) => ({ version: API_VERSION, ...ctx.services.fleet.packageTrust(query.package_name) })),
  on(getAssuranceSummary, (_i, ctx) => ({ version: API_VERSION, ...ctx.services.fleet.assuranceSummary() })),
  on(getDiagnosisSummary, (_i, ctx) => ({ version: API_VERSION, ...ctx.services.fleet.diagnosisSummary() })),
];
