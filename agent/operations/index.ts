import type { Operation } from '../core/operation.js';
import { adminOperations } from './admin.js';
import { auditOperations } from './audit.js';
import { authOperations } from './auth.js';
import { deviceOperations, halOperations } from './devices.js';
import { entityOperations } from './entities.js';
import { fleetOperations } from './fleet.js';
import { metaOperations } from './meta.js';
import { oidcOperations } from './oidc.js';
import { programOperations } from './programs.js';
import { rpcOperations } from './rpc.js';
import { sreOperations } from './sre.js';

/**
 * The operation table (brief §2): every operation of the API, declared once. REST routes, the
 * OpenAPI document, the CLI commands (and the gRPC service and JSON-RPC gateway) derive from it.
 */
export const OPERATIONS: readonly Operation[] = [
  ...metaOperations,
  ...authOperations,
  ...adminOperations,
  ...auditOperations,
  ...oidcOperations,
  ...deviceOperations,
  ...halOperations,
  ...fleetOperations,
  ...entityOperations,
  ...sreOperations,
  ...programOperations,
  ...rpcOperations,
];
