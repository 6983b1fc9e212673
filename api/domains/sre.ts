import * as z from 'zod';
import { defineSpec } from '../spec.js';

const createBody = z.lazy(() => z.object({
  title: z.string().min(1, 'missing title').max(500),
  description: z.string().max(5000).optional(),
  severity: z.string().max(20).optional(),
  source_alert_id: z.string().max(200).optional(),
}));

/** SRE incidents; critical alerts open them automatically (docs/events.md § Incidents). */
export const listSreIncidents = defineSpec({
  id: 'listSreIncidents',
  group: 'sre',
  summary: 'Incidents, oldest first',
  method: 'GET',
  path: '/v1/sre/incidents',
  access: { kind: 'sensitive-read' },
  rpc: { name: 'ListSreIncidents', request: 'Empty' },
  cli: ['incidents', 'list'],
});

export const createSreIncident = defineSpec<z.infer<typeof createBody>>({
  id: 'createSreIncident',
  group: 'sre',
  summary: 'Open an incident',
  method: 'POST',
  path: '/v1/sre/incidents',
  access: { kind: 'action', action: 'Operate' },
  rpc: { name: 'CreateSreIncident', request: 'JsonBodyRequest' },
  cli: ['incidents', 'create'],
  body: createBody,
});

export const ackSreIncident = defineSpec<{ assignee?: string | undefined }>({
  id: 'ackSreIncident',
  group: 'sre',
  summary: 'Acknowledge an incident (409 once resolved)',
  method: 'POST',
  path: '/v1/sre/incidents/{id}/ack',
  access: { kind: 'action', action: 'Operate' },
  rpc: { name: 'AckSreIncident', request: 'IncidentBodyRequest' },
  cli: ['incidents', 'ack'],
  body: z.lazy(() => z.object({ assignee: z.string().max(200).optional() })),
});

export const resolveSreIncident = defineSpec({
  id: 'resolveSreIncident',
  group: 'sre',
  summary: 'Resolve an incident',
  method: 'POST',
  path: '/v1/sre/incidents/{id}/resolve',
  access: { kind: 'action', action: 'Operate' },
  rpc: { name: 'ResolveSreIncident', request: 'IncidentIdRequest' },
  cli: ['incidents', 'resolve'],
  body: z.lazy(() => z.object({})),
});

/** Fleet health at a glance (docs/observability.md § Fleet health): the device pool and its overall status. */
export const getHealthSummary = defineSpec({
  id: 'getHealthSummary',
  group: 'sre',
  summary: 'Device pool and overall status (critical with a failed device, degraded with a degraded one)',
  method: 'GET',
  path: '/v1/health/summary',
  access: { kind: 'public' },
  rpc: { name: 'GetHealthSummary', request: 'Empty' },
  cli: ['health', 'summary'],
});

/**
 * SRE rollup (docs/observability.md § SRE summary): availability, SLO and burn rate computed from the
 * recorded health samples, incident load, MTTR/MTBF hints and readiness trends of the loaded program.
 */
export const getSreSummary = defineSpec({
  id: 'getSreSummary',
  group: 'sre',
  summary: 'SLO, availability and error-budget burn from recorded history; incidents, MTTR/MTBF hints, readiness trends',
  method: 'GET',
  path: '/v1/sre/summary',
  access: { kind: 'sensitive-read' },
  rpc: { name: 'GetSreSummary', request: 'Empty' },
  jsonRpcAliases: ['svc.v1.SvcService/GetSreSummary'],
  cli: ['sre', 'summary'],
});

export const sreSpecs = [listSreIncidents, createSreIncident, ackSreIncident, resolveSreIncident, getHealthSummary, getSreSummary];
