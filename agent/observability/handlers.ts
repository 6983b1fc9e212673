import { listAlerts, testAlert } from '../../api/domains/alerts.js';
import { API_VERSION } from '../../api/versions.js';
import { handlersFor } from '../core/handlers.js';

const on = handlersFor(['alerts']);

export const alertHandlers = [
  on(listAlerts, (_input, ctx) => ({ version: API_VERSION, alerts: ctx.services.alerts.list() })),
  on(testAlert, ({ body }, ctx) => {
    const who = ctx.principal?.key_id ?? 'anonymous';
    const alert = ctx.services.alerts.raise(
      { alert_type: 'custom', severity: 'info', source: 'control-center', message: body.message ?? `test alert requested by ${who}` },
      Date.now(),
      { dedup: false },
    );
    return { ok: true, alert };
  }),
];
