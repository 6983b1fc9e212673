import type { Alert } from '../observability/alerts.js';

/** `config_drift` → `ConfigDrift`, `critical` → `Critical`. */
export function pascal(value: string): string {
  return value
    .split('_')
    .map((p) => p.charAt(0).toUpperCase() + p.slice(1))
    .join('');
}

/** The alert as generic webhooks receive it (without `delivered_via`, which is still being filled). */
export function alertJson(alert: Alert): Record<string, unknown> {
  const { delivered_via: _ignored, ...rest } = alert;
  return rest;
}

/** One line for Slack (incoming webhook `text`), e-mail subjects and logs. */
export function slackText(alert: Alert): string {
  return `[Svc] ${pascal(alert.severity)} ${pascal(alert.alert_type)} — ${alert.message} (${alert.source})`;
}

/** PagerDuty Events API v2 trigger; `dedup_key` is the alert id, as the incident's `pagerduty_dedup_key`. */
export function pagerDutyEvent(alert: Alert, routingKey: string, incidentId: string | null): Record<string, unknown> {
  return {
    routing_key: routingKey,
    event_action: 'trigger',
    dedup_key: alert.id,
    payload: {
      summary: alert.message,
      severity: alert.severity,
      source: alert.source,
      custom_details: { alert_id: alert.id, alert_type: pascal(alert.alert_type), ...(incidentId ? { incident_id: incidentId } : {}) },
    },
  };
}

/** Microsoft Teams connector MessageCard. */
export function teamsCard(alert: Alert): Record<string, unknown> {
  return {
    '@type': 'MessageCard',
    '@context': 'https://schema.org/extensions',
    summary: alert.message,
    themeColor: 'D13438',
    title: `Svc ${pascal(alert.severity)} alert`,
    sections: [
      {
        facts: [
          { name: 'Type', value: pascal(alert.alert_type) },
          { name: 'Source', value: alert.source },
          { name: 'Message', value: alert.message },
        ],
      },
    ],
  };
}

/** The e-mail of an alert: subject and plain-text body. */
export function alertMail(alert: Alert): { subject: string; text: string } {
  return {
    subject: `[Svc] ${pascal(alert.severity)} ${pascal(alert.alert_type)} alert from ${alert.source}`,
    text: [
      slackText(alert),
      '',
      `Alert id:  ${alert.id}`,
      `Type:      ${pascal(alert.alert_type)} (${alert.alert_type})`,
      `Severity:  ${alert.severity}`,
      `Source:    ${alert.source}`,
      `Raised at: ${new Date(alert.timestamp_ms).toISOString()}`,
      '',
      alert.message,
      '',
    ].join('\n'),
  };
}
