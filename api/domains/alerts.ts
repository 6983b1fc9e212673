import * as z from 'zod';
import { defineSpec } from '../spec.js';

/** The alert ring and its test trigger (docs/api.md § Alerts). */
export const listAlerts = defineSpec({
  id: 'listAlerts',
  group: 'alerts',
  summary: 'Alerts held in the alert ring, oldest first',
  method: 'GET',
  path: '/v1/alerts',
  access: { kind: 'read' },
  rpc: { name: 'ListAlerts', request: 'Empty' },
  cli: ['alerts', 'list'],
});

export const testAlert = defineSpec<{ message?: string | undefined }>({
  id: 'testAlert',
  group: 'alerts',
  summary: 'Raise an informational test alert through the alert pipeline',
  method: 'POST',
  path: '/v1/alerts/test',
  access: { kind: 'action', action: 'Operate' },
  rpc: { name: 'TestAlert', request: 'Empty' },
  cli: ['alerts', 'test'],
  body: z.lazy(() => z.object({ message: z.string().min(1).max(1000).optional() })),
});

export const alertSpecs = [listAlerts, testAlert];
