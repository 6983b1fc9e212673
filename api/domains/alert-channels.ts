import * as z from 'zod';
import { defineSpec } from '../spec.js';

/**
 * Where alerts go and the integrations that feed incidents back (docs/operations.md § Alerting): the
 * live alert channels, the integrations summary, the Slack setup wizard, the PagerDuty inbound
 * webhook and the per-alert delivery log. Secrets (PagerDuty routing keys, the Slack client secret
 * and stored Slack webhook URL) are write-only: no read returns them.
 */

const channelsBody = z.lazy(() => z.object({
  // Each channel is checked by the agent, which answers the reference's decoder texts (§ Alerting).
  channels: z.array(z.unknown()).max(100),
  use_env_fallback: z.boolean().optional(),
}));

const slackBody = z.lazy(() => z.object({
  webhook_url: z.string().max(2000).optional(),
  oauth_client_id: z.string().max(500).optional(),
  oauth_client_secret: z.string().max(500).optional(),
  team_name: z.string().max(500).optional(),
  oauth_redirect_uri: z.string().max(2000).optional(),
}));

const oauthUrlBody = z.lazy(() => z.object({ redirect_uri: z.string().max(2000).optional() }));

const oauthCallbackBody = z.lazy(() => z.object({ code: z.string().max(2000), state: z.string().max(500).optional() }));

const pagerDutyBody = z.lazy(() => z.object({
  event: z.string().max(200).optional(),
  incident_id: z.string().max(500).optional(),
  dedup_key: z.string().max(500).optional(),
  assignee: z.string().max(200).optional(),
  messages: z
    .array(z.object({ event: z.string().max(200).optional(), incident: z.object({ incident_key: z.string().max(500).optional() }).passthrough().optional() }).passthrough())
    .max(100)
    .optional(),
}).passthrough());

export const getAlertChannels = defineSpec({
  id: 'getAlertChannels',
  group: 'alerting',
  summary: 'Live alert channels (PagerDuty routing keys never shown)',
  method: 'GET',
  path: '/v1/admin/alert-channels',
  access: { kind: 'action', action: 'Deploy' },
  rpc: { name: 'GetAlertChannels', request: 'Empty' },
  jsonRpc: true,
  cli: ['admin', 'alert-channels', 'get'],
});

export const updateAlertChannels = defineSpec<z.infer<typeof channelsBody>>({
  id: 'updateAlertChannels',
  group: 'alerting',
  summary: 'Replace the alert channels and persist them',
  method: 'PUT',
  path: '/v1/admin/alert-channels',
  access: { kind: 'admin' },
  rpc: { name: 'UpdateAlertChannels', request: 'JsonBodyRequest' },
  jsonRpc: true,
  cli: ['admin', 'alert-channels', 'set'],
  body: channelsBody,
});

export const getAdminIntegrations = defineSpec({
  id: 'getAdminIntegrations',
  group: 'alerting',
  summary: 'Integrations summary: alert channels (kind:target, no secrets), observability, tenant, key count',
  method: 'GET',
  path: '/v1/admin/integrations',
  access: { kind: 'action', action: 'Deploy' },
  rpc: { name: 'GetAdminIntegrations', request: 'Empty' },
  jsonRpc: true,
  cli: ['admin', 'integrations'],
});

export const getAdminSlack = defineSpec({
  id: 'getAdminSlack',
  group: 'alerting',
  summary: 'Slack settings (client secret and webhook URL are write-only)',
  method: 'GET',
  path: '/v1/admin/slack',
  access: { kind: 'admin' },
  cli: ['admin', 'slack', 'get'],
});

export const updateAdminSlack = defineSpec<z.infer<typeof slackBody>>({
  id: 'updateAdminSlack',
  group: 'alerting',
  summary: 'Store Slack settings; non-empty fields overwrite',
  method: 'POST',
  path: '/v1/admin/slack',
  access: { kind: 'admin' },
  cli: ['admin', 'slack', 'set'],
  body: slackBody,
});

export const createSlackOauthUrl = defineSpec<z.infer<typeof oauthUrlBody>>({
  id: 'createSlackOauthUrl',
  group: 'alerting',
  summary: 'Start the Slack OAuth flow: a random single-use state and the authorize URL',
  method: 'POST',
  path: '/v1/admin/slack/oauth-url',
  access: { kind: 'admin' },
  cli: ['admin', 'slack', 'oauth-url'],
  body: oauthUrlBody,
});

export const completeSlackOauth = defineSpec<z.infer<typeof oauthCallbackBody>>({
  id: 'completeSlackOauth',
  group: 'alerting',
  summary: 'Finish the Slack OAuth flow: exchange the code, store team and incoming webhook',
  method: 'POST',
  path: '/v1/admin/slack/oauth/callback',
  access: { kind: 'admin' },
  cli: ['admin', 'slack', 'oauth-callback'],
  body: oauthCallbackBody,
});

export const pagerDutyWebhook = defineSpec<z.infer<typeof pagerDutyBody>>({
  id: 'pagerDutyWebhook',
  group: 'alerting',
  summary: 'PagerDuty inbound webhook: acknowledge or resolve the matching incident',
  method: 'POST',
  path: '/v1/integrations/pagerduty/webhook',
  access: { kind: 'action', action: 'Operate', orSharedSecret: { header: 'X-Svc-Webhook-Secret', secret: 'pagerduty-webhook' } },
  cli: false,
  body: pagerDutyBody,
});

export const listAlertDeliveries = defineSpec({
  id: 'listAlertDeliveries',
  group: 'alerting',
  summary: "An alert's delivery log: every attempt per channel (targets redacted)",
  method: 'GET',
  path: '/v1/alerts/{id}/deliveries',
  access: { kind: 'sensitive-read' },
  cli: ['alerts', 'deliveries'],
});

export const alertChannelSpecs = [
  getAlertChannels,
  updateAlertChannels,
  getAdminIntegrations,
  getAdminSlack,
  updateAdminSlack,
  createSlackOauthUrl,
  completeSlackOauth,
  pagerDutyWebhook,
  listAlertDeliveries,
];
