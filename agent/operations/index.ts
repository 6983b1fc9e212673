import type { OperationSpec } from '../../api/spec.js';
import { splitOperation, type Operation } from './legacy-operation.js';
import { adminOperations } from './admin.js';
import { auditOperations } from './audit.js';
import { authOperations } from './auth.js';
import { entityOperations } from './entities.js';
import { oidcOperations } from './oidc.js';
import { programOperations } from './programs.js';

/**
 * The operation table (brief §2): every operation of the API, declared once. REST routes, the
 * OpenAPI document, the CLI commands (and the gRPC service and JSON-RPC gateway) derive from it.
 */
const COMBINED: readonly Operation[] = [
  ...authOperations,
  ...adminOperations,
  ...auditOperations,
  ...oidcOperations,
  ...entityOperations,
  ...programOperations,
];

const split = COMBINED.map(splitOperation);
/** Specs of the combined operation modules, in table order; they follow the contract's `SPECS`. */
export const LEGACY_SPECS: readonly OperationSpec[] = split.map((s) => s.spec);
export const LEGACY_BINDINGS = split.map((s) => s.binding);
