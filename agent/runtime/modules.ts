import { alertingModule } from '../alerting/module.js';
import { auditModule } from '../audit/module.js';
import { autonomyModule } from '../autonomy/module.js';
import type { DomainModule } from '../core/module.js';
import { decisionsModule } from '../decisions/module.js';
import { deploymentModule } from '../deployment/module.js';
import { governanceModule } from '../governance/module.js';
import { devicesModule } from '../devices/module.js';
import { entitiesModule } from '../entities/module.js';
import { fleetModule } from '../fleet/module.js';
import { incidentsModule } from '../incidents/module.js';
import { meshModule } from '../mesh/module.js';
import { chaosModule } from '../chaos/module.js';
import { configControlModule } from '../config-control/module.js';
import { driftModule } from '../drift/module.js';
import { metaModule } from '../meta/module.js';
import { observabilityModule } from '../observability/module.js';
import { operatorModule } from '../operator/module.js';
import { otaModule } from '../ota/module.js';
import { outboundModule } from '../outbound/module.js';
import { programsModule } from '../programs/module.js';
import { recoveryModule } from '../recovery/module.js';
import { reportsModule } from '../reports/module.js';
import { rpcModule } from '../rpc/module.js';
import { secretMetadataModule } from '../secret-metadata/module.js';
import { securityModule } from '../security/module.js';
import { sreModule } from '../sre/module.js';
import { analyticsModule } from '../analytics/module.js';
import { observabilityExportModule } from '../observability/export-module.js';
import { telemetryModule } from '../telemetry/module.js';
import { twinsModule } from '../twins/module.js';
import { hriModule } from '../hri/module.js';
import { peopleModule } from '../people/module.js';
import { pluginsModule } from '../plugins/module.js';
import { spacesModule } from '../spaces/module.js';

/**
 * The agent's domains in the order they open (each may use what the ones before it provide); they
 * close in reverse, so the audit chain outlives every domain that records into it.
 */
export const MODULES: readonly DomainModule[] = [
  outboundModule,
  telemetryModule,
  observabilityModule,
  auditModule,
  incidentsModule,
  alertingModule,
  securityModule,
  devicesModule,
  fleetModule,
  programsModule,
  entitiesModule,
  operatorModule,
  recoveryModule,
  meshModule,
  chaosModule,
  decisionsModule,
  autonomyModule,
  configControlModule,
  driftModule,
  reportsModule,
  deploymentModule,
  governanceModule,
  secretMetadataModule,
  otaModule,
  sreModule,
  twinsModule,
  hriModule,
  analyticsModule,
  spacesModule,
  observabilityExportModule,
  peopleModule,
  pluginsModule,
  metaModule,
  rpcModule,
];
