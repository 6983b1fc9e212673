import { adminSpecs } from './domains/admin.js';
import { alertChannelSpecs } from './domains/alert-channels.js';
import { alertSpecs } from './domains/alerts.js';
import { auditSpecs } from './domains/audit.js';
import { autonomySpecs } from './domains/autonomy.js';
import { authSpecs } from './domains/auth.js';
import { chaosSpecs } from './domains/chaos.js';
import { configControlSpecs } from './domains/config-control.js';
import { decisionSpecs } from './domains/decisions.js';
import { deploymentSpecs } from './domains/deployment.js';
import { governanceSpecs } from './domains/governance.js';
import { deviceSpecs } from './domains/devices.js';
import { entitySpecs } from './domains/entities.js';
import { fleetSpecs } from './domains/fleet.js';
import { meshSpecs } from './domains/mesh.js';
import { metaSpecs } from './domains/meta.js';
import { oidcSpecs } from './domains/oidc.js';
import { operatorSpecs } from './domains/operator.js';
import { otaSpecs } from './domains/ota.js';
import { programSpecs } from './domains/programs.js';
import { recoverySpecs } from './domains/recovery.js';
import { relayLinkSpecs } from './domains/relay-link.js';
import { reportSpecs } from './domains/reports.js';
import { analyticsSpecs } from './domains/analytics.js';
import { rpcSpecs } from './domains/rpc.js';
import { sreSpecs } from './domains/sre.js';
import { observabilitySpecs } from './domains/observability.js';
import { twinSpecs } from './domains/twins.js';
import { hriSpecs } from './domains/hri.js';
import { peopleSpecs } from './domains/people.js';
import { pluginSpecs } from './domains/plugins.js';
import { spacesSpecs } from './domains/spaces.js';
import type { OperationSpec } from './spec.js';

export * from './spec.js';
export * from './roles.js';
export * from './errors.js';
export * from './versions.js';

/**
 * The contract: every operation of the API, grouped by domain (`api/domains/<domain>.ts`), in the
 * order the OpenAPI document, the `.proto` and the CLI list them. This package holds no behaviour
 * and imports nothing from the agent (test/architecture/import-boundaries.test.ts); the agent binds a
 * handler to every spec, and the relay, the clients and the panel read the same list.
 */
export const SPECS: readonly OperationSpec[] = [
  ...metaSpecs,
  ...relayLinkSpecs,
  ...alertSpecs,
  ...authSpecs,
  ...adminSpecs,
  ...auditSpecs,
  ...oidcSpecs,
  ...deviceSpecs,
  ...fleetSpecs,
  ...entitySpecs,
  ...sreSpecs,
  ...programSpecs,
  ...rpcSpecs,
  ...operatorSpecs,
  ...recoverySpecs,
  ...meshSpecs,
  ...chaosSpecs,
  ...decisionSpecs,
  ...autonomySpecs,
  ...configControlSpecs,
  ...reportSpecs,
  ...alertChannelSpecs,
  ...deploymentSpecs,
  ...governanceSpecs,
  ...otaSpecs,
  ...observabilitySpecs,
  ...twinSpecs,
  ...hriSpecs,
  ...analyticsSpecs,
  ...peopleSpecs,
  ...pluginSpecs,
  ...spacesSpecs,
];
