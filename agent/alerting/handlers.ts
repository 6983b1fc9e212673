import { observabilityBackend } from '../observability/otlp/otlp-endpoints.js';
import {
  completeSlackOauth,
  createSlackOauthUrl,
  getAdminIntegrations,
  getAdminSlack,
  getAlertChannels,
  listAlertDeliveries,
  pagerDutyWebhook,
  updateAdminSlack,
  updateAlertChannels,
} from '../../api/domains/alert-channels.js';
import { handlersFor } from '../core/handlers.js';

const on = handlersFor(['alerting', 'settings', 'credentials']);

/** Alert channels, integrations, the Slack wizard, the PagerDuty webhook and delivery logs (docs/operations.md § Alerting). */
export const alertingHandlers = [
  on(getAlertChannels, (_i, ctx) => ctx.services.alerting.getChannels()),
  on(updateAlertChannels, ({ body }, ctx) => ctx.services.alerting.updateChannels(body)),
  on(getAdminIntegrations, (_i, ctx) =>
    ctx.services.alerting.integrations({
      tenantId: ctx.services.settings.tenantId,
      apiKeysLoaded: ctx.services.credentials.keysLoaded,
      observability: observabilityBackend(ctx.services.settings.otlp),
    }),
  ),
  on(getAdminSlack, (_i, ctx) => ctx.services.alerting.slack.view()),
  on(updateAdminSlack, ({ body }, ctx) => ctx.services.alerting.slack.update(body)),
  on(createSlackOauthUrl, ({ body }, ctx) => ctx.services.alerting.slack.authorizeUrl(body)),
  on(completeSlackOauth, ({ body }, ctx) => ctx.services.alerting.slack.complete(body)),
  on(pagerDutyWebhook, ({ body }, ctx) => ctx.services.alerting.pagerDutyWebhook(body)),
  on(listAlertDeliveries, ({ params }, ctx) => ctx.services.alerting.deliveriesOf(params['id']!)),
];
