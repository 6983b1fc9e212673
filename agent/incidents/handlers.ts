import { ackSreIncident, createSreIncident, listSreIncidents, resolveSreIncident } from '../../api/domains/sre.js';
import { API_VERSION } from '../../api/versions.js';
import { handlersFor } from '../core/handlers.js';

const on = handlersFor(['incidents']);

/** SRE incidents over the incident service; critical alerts open them on their own (docs/events.md § Incidents). */
export const incidentHandlers = [
  on(listSreIncidents, (_i, ctx) => ({ version: API_VERSION, incidents: ctx.services.incidents.list() })),
  on(createSreIncident, ({ body }, ctx) => ({ ok: true, incident: ctx.services.incidents.create(body) })),
  on(ackSreIncident, ({ body, params }, ctx) => ({ ok: true, incident: ctx.services.incidents.acknowledge(params['id']!, body.assignee), pagerduty_sync: null })),
  on(resolveSreIncident, ({ params }, ctx) => ({ ok: true, incident: ctx.services.incidents.resolve(params['id']!), pagerduty_sync: null })),
];
