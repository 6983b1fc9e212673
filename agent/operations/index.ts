import type { Operation } from '../core/operation.js';
import { metaOperations } from './meta.js';

/**
 * The operation table (brief §2): every operation of the API, declared once. REST routes, the
 * OpenAPI document, the CLI commands (and the gRPC service and JSON-RPC gateway) derive from it.
 */
export const OPERATIONS: readonly Operation[] = [...metaOperations];
