import { badRequest } from '../core/errors.js';
import type { AlertingSettings } from '../settings/settings.js';

/**
 * The alert channel model (docs/operations.md § Alerting): externally tagged JSON, as the reference
 * stores it in `alert-channels.json` and takes it in `PUT /v1/admin/alert-channels`.
 */
export type AlertChannel =
  | 'log'
  | { webhook: { url: string } }
  | { email: { to: string } }
  | { pager_duty: { url: string; routing_key: string } }
  | { teams: { url: string } };

/**
 * What the dispatcher delivers to: a configured channel, or the Slack incoming webhook stored by the
 * Slack wizard (delivered with the Slack text body, reported as `webhook:<url>`).
 */
export type DeliveryTarget = AlertChannel | { slack_webhook: { url: string } };

export const CHANNEL_VARIANTS = ['webhook', 'email', 'pager_duty', 'teams', 'log'] as const;

const unknownVariant = (name: string) =>
  badRequest(`unknown variant \`${name}\`, expected one of ${CHANNEL_VARIANTS.map((v) => `\`${v}\``).join(', ')}`);

function isHttpUrl(raw: string): boolean {
  try {
    const u = new URL(raw);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

function field(value: unknown, name: string, where: string): string {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw badRequest(`${where}: expected an object with field \`${name}\``);
  const v = (value as Record<string, unknown>)[name];
  if (v === undefined) throw badRequest(`${where}: missing field \`${name}\``);
  if (typeof v !== 'string') throw badRequest(`${where}: field \`${name}\` must be a string`);
  return v.trim();
}

function url(value: unknown, where: string): string {
  const u = field(value, 'url', where);
  // Ours (the reference accepted anything): only absolute http(s) URLs, the outbound client's rule.
  if (!isHttpUrl(u)) throw badRequest(`${where}: url must be an absolute http:// or https:// URL`);
  return u;
}

/**
 * One channel of a request or of the stored file. A PagerDuty channel without `routing_key` keeps the
 * key of a live channel with the same URL, else the configured default: reads never show the key, so a
 * client that sends back what it read must not lose it.
 */
export function parseChannel(raw: unknown, index: number, keyFor: (url: string) => string): AlertChannel {
  const where = `channels[${index}]`;
  if (typeof raw === 'string') {
    if (raw === 'log') return 'log';
    if ((CHANNEL_VARIANTS as readonly string[]).includes(raw)) throw badRequest(`${where}: \`${raw}\` needs its settings object, e.g. {"${raw}":{…}}`);
    throw unknownVariant(raw);
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw badRequest(`${where}: expected a channel name or a one-key object`);
  const keys = Object.keys(raw);
  if (keys.length !== 1) throw badRequest(`${where}: expected exactly one channel kind, got ${keys.length}`);
  const kind = keys[0]!;
  const value = (raw as Record<string, unknown>)[kind];
  switch (kind) {
    case 'log':
      return 'log';
    case 'webhook':
      return { webhook: { url: url(value, where) } };
    case 'teams':
      return { teams: { url: url(value, where) } };
    case 'email': {
      const to = field(value, 'to', where);
      if (!/^[^\s@]+@[^\s@]+$/.test(to)) throw badRequest(`${where}: to must be an e-mail address`);
      return { email: { to } };
    }
    case 'pager_duty': {
      const u = url(value, where);
      const given = (value as Record<string, unknown>)['routing_key'];
      if (given !== undefined && typeof given !== 'string') throw badRequest(`${where}: field \`routing_key\` must be a string`);
      const key = typeof given === 'string' && given.trim() !== '' ? given.trim() : keyFor(u);
      return { pager_duty: { url: u, routing_key: key } };
    }
    default:
      throw unknownVariant(kind);
  }
}

/** The initial list from the environment: webhook, PagerDuty, Teams, e-mail; none → log. */
export function channelsFromSettings(s: AlertingSettings): AlertChannel[] {
  const out: AlertChannel[] = [];
  if (s.webhookUrl) out.push({ webhook: { url: s.webhookUrl } });
  if (s.pagerdutyUrl) out.push({ pager_duty: { url: s.pagerdutyUrl, routing_key: s.pagerdutyRoutingKey } });
  if (s.teamsUrl) out.push({ teams: { url: s.teamsUrl } });
  if (s.emailTo) out.push({ email: { to: s.emailTo } });
  return out.length > 0 ? out : ['log'];
}

/** Hosts whose webhook URLs carry the credential in their path (whoever knows the URL may post). */
const SECRET_PATH_HOSTS = [/(^|\.)hooks\.slack\.com$/i, /(^|\.)webhook\.office\.com$/i, /^outlook\.office(365)?\.com$/i];

/**
 * A URL as reads show it: user information, query values and fragments are masked everywhere, and
 * the path of a known credential-bearing webhook host (Slack, Teams) is masked too. Other paths stay:
 * the URL is where alerts go, and an operator must be able to see that. A URL with nothing to mask
 * is returned exactly as configured.
 */
export function redactUrl(raw: string, options: { secretPath?: boolean } = {}): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return '***';
  }
  const secretPath = (options.secretPath === true || SECRET_PATH_HOSTS.some((re) => re.test(u.hostname))) && u.pathname.length > 1;
  if (!u.username && !u.password && !u.search && !u.hash && !secretPath) return raw;
  const query = [...u.searchParams.keys()].map((k) => `${encodeURIComponent(k)}=***`).join('&');
  const path = secretPath ? `/${u.pathname.split('/').filter(Boolean)[0] ?? ''}/***` : u.pathname;
  return `${u.protocol}//${u.host}${path}${query ? `?${query}` : ''}`;
}

/** The `delivered_via` / integrations vocabulary: `log`, `webhook:<url>`, `email:<to>`, `pagerduty:<url>`, `teams:<url>` (URLs redacted). */
export function channelLabel(channel: DeliveryTarget): string {
  if (channel === 'log') return 'log';
  if ('webhook' in channel) return `webhook:${redactUrl(channel.webhook.url)}`;
  // The wizard's webhook is write-only whatever its host: its path is always masked.
  if ('slack_webhook' in channel) return `webhook:${redactUrl(channel.slack_webhook.url, { secretPath: true })}`;
  if ('email' in channel) return `email:${channel.email.to}`;
  if ('pager_duty' in channel) return `pagerduty:${redactUrl(channel.pager_duty.url)}`;
  return `teams:${redactUrl(channel.teams.url)}`;
}

/** A channel as `GET /v1/admin/alert-channels` shows it: routing keys replaced by `routing_key_set`, URLs redacted. */
export function channelView(channel: AlertChannel): unknown {
  if (channel === 'log') return 'log';
  if ('webhook' in channel) return { webhook: { url: redactUrl(channel.webhook.url) } };
  if ('email' in channel) return { email: { to: channel.email.to } };
  if ('pager_duty' in channel) return { pager_duty: { url: redactUrl(channel.pager_duty.url), routing_key_set: channel.pager_duty.routing_key !== '' } };
  return { teams: { url: redactUrl(channel.teams.url) } };
}

/** The target URL of an HTTP channel, null for log and e-mail. */
/** A target's URL as reads may show it. */
export function shownUrl(channel: DeliveryTarget): string | null {
  const url = targetUrl(channel);
  if (url === null) return null;
  return redactUrl(url, { secretPath: typeof channel === 'object' && 'slack_webhook' in channel });
}

export function targetUrl(channel: DeliveryTarget): string | null {
  if (channel === 'log') return null;
  if ('webhook' in channel) return channel.webhook.url;
  if ('slack_webhook' in channel) return channel.slack_webhook.url;
  if ('pager_duty' in channel) return channel.pager_duty.url;
  if ('teams' in channel) return channel.teams.url;
  return null;
}
