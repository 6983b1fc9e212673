import { SPECS } from '../../api/index.js';
import type { OperationSpec } from '../../api/spec.js';
import { auditModule } from '../audit/module.js';
import type { DomainModule } from '../core/module.js';
import { devicesModule } from '../devices/module.js';
import { entitiesModule } from '../entities/module.js';
import { fleetModule } from '../fleet/module.js';
import { incidentsModule } from '../incidents/module.js';
import { metaModule } from '../meta/module.js';
import { observabilityModule } from '../observability/module.js';
import { LEGACY_SPECS } from '../operations/index.js';
import { legacyOperationsModule } from '../operations/module.js';
import { TABLE_ORDER } from '../operations/table-order.js';
import { programsModule } from '../programs/module.js';
import { rpcModule } from '../rpc/module.js';
import { securityModule } from '../security/module.js';
import { telemetryModule } from '../telemetry/module.js';

/**
 * The agent's domains in the order they open (each may use what the ones before it provide); they
 * close in reverse, so the audit chain outlives every domain that records into it.
 */
export const MODULES: readonly DomainModule[] = [
  telemetryModule,
  observabilityModule,
  auditModule,
  incidentsModule,
  securityModule,
  devicesModule,
  fleetModule,
  programsModule,
  entitiesModule,
  metaModule,
  legacyOperationsModule,
  rpcModule,
];

/** Every operation the agent serves: the contract, then the transitional combined modules. */
export const AGENT_SPECS: readonly OperationSpec[] = [...SPECS, ...LEGACY_SPECS].sort((a, b) => rank(a) - rank(b));

function rank(spec: OperationSpec): number {
  const i = TABLE_ORDER.indexOf(spec.id);
  return i === -1 ? TABLE_ORDER.length : i;
}
