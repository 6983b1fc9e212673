import * as z from 'zod';
import { defineOperation, type Operation } from './legacy-operation.js';
import { API_VERSION } from '../../api/versions.js';

const createBody = z.lazy(() => z.object({
  title: z.string().min(1, 'missing title').max(500),
  description: z.string().max(5000).optional(),
  severity: z.string().max(20).optional(),
  source_alert_id: z.string().max(200).optional(),
}));

/** SRE incidents (api-behaviour §10.8); critical alerts open them automatically. */
export const sreOperations: Operation[] = [
  defineOperation({
    id: 'listSreIncidents',
    group: 'sre',
    summary: 'Incidents, oldest first',
    method: 'GET',
    path: '/v1/sre/incidents',
    access: { kind: 'sensitive-read' },
    rpc: { name: 'ListSreIncidents', request: 'Empty' },
    cli: ['incidents', 'list'],
    handler: (_i, ctx) => ({ version: API_VERSION, incidents: ctx.services.incidents.list() }),
  }),
  defineOperation<z.infer<typeof createBody>>({
    id: 'createSreIncident',
    group: 'sre',
    summary: 'Open an incident',
    method: 'POST',
    path: '/v1/sre/incidents',
    access: { kind: 'action', action: 'Operate' },
    rpc: { name: 'CreateSreIncident', request: 'JsonBodyRequest' },
    cli: ['incidents', 'create'],
    body: createBody,
    handler: ({ body }, ctx) => ({ ok: true, incident: ctx.services.incidents.create(body) }),
  }),
  defineOperation<{ assignee?: string | undefined }>({
    id: 'ackSreIncident',
    group: 'sre',
    summary: 'Acknowledge an incident (409 once resolved)',
    method: 'POST',
    path: '/v1/sre/incidents/{id}/ack',
    access: { kind: 'action', action: 'Operate' },
    rpc: { name: 'AckSreIncident', request: 'IncidentBodyRequest' },
    cli: ['incidents', 'ack'],
    body: z.lazy(() => z.object({ assignee: z.string().max(200).optional() })),
    handler: ({ body, params }, ctx) => ({ ok: true, incident: ctx.services.incidents.acknowledge(params['id']!, body.assignee), pagerduty_sync: null }),
  }),
  defineOperation({
    id: 'resolveSreIncident',
    group: 'sre',
    summary: 'Resolve an incident',
    method: 'POST',
    path: '/v1/sre/incidents/{id}/resolve',
    access: { kind: 'action', action: 'Operate' },
    rpc: { name: 'ResolveSreIncident', request: 'IncidentIdRequest' },
    cli: ['incidents', 'resolve'],
    body: z.lazy(() => z.object({})),
    handler: ({ params }, ctx) => ({ ok: true, incident: ctx.services.incidents.resolve(params['id']!), pagerduty_sync: null }),
  }),
];
