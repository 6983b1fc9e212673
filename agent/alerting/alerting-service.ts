import path from 'node:path';
import { API_VERSION } from '../../api/versions.js';
import { badRequest, notFound } from '../core/errors.js';
import type { Incident, IncidentService } from '../incidents/incidents.js';
import type { AlertService } from '../observability/alerts.js';
import type { OutboundHttp } from '../outbound/outbound-http.js';
import type { AlertingSettings } from '../settings/settings.js';
import { JsonStore } from '../state/json-store.js';
import { channelLabel, channelsFromSettings, channelView, parseChannel, redactUrl, type AlertChannel, type DeliveryTarget } from './channels.js';
import { DeliveryLog } from './delivery-log.js';
import { ChannelDispatcher } from './dispatcher.js';
import { SlackWizard } from './slack.js';

interface ChannelsFile {
  channels: AlertChannel[];
  use_env_fallback: boolean;
}

export const CHANNELS_FILE = 'alert-channels.json';

export interface AlertingDeps {
  stateDir: string;
  settings: AlertingSettings;
  outbound: OutboundHttp;
  alerts: AlertService;
  incidents: IncidentService;
  log: (line: string) => void;
}

/** What `GET /v1/admin/integrations` needs from outside this domain. */
export interface IntegrationFacts {
  tenantId: string;
  apiKeysLoaded: number;
  /** The observability backend document (`GET /v1/observability/backend`). */
  observability: Record<string, unknown>;
}

/**
 * Alert delivery and the integrations around it (docs/operations.md § Alerting): the live channel
 * list (environment, then `alert-channels.json`), the dispatcher installed into the alert pipeline,
 * the delivery log, the Slack wizard and the PagerDuty inbound webhook.
 */
export class AlertingService {
  private channels: AlertChannel[];
  private useEnvFallback: boolean;
  readonly dispatcher: ChannelDispatcher;

  private constructor(
    private readonly deps: AlertingDeps,
    private readonly store: JsonStore<ChannelsFile | null>,
    readonly deliveries: DeliveryLog,
    readonly slack: SlackWizard,
  ) {
    const stored = store.data;
    // The file wins when it names channels, or when it says not to fall back on the environment.
    if (stored && (stored.channels.length > 0 || !stored.use_env_fallback)) {
      this.channels = stored.channels.length > 0 ? stored.channels : ['log'];
      this.useEnvFallback = stored.use_env_fallback;
    } else {
      this.channels = channelsFromSettings(deps.settings);
      this.useEnvFallback = true;
    }
    this.dispatcher = new ChannelDispatcher({
      settings: deps.settings,
      outbound: deps.outbound,
      log: deliveries,
      targets: () => this.targets(),
      incidentFor: (alertId) => deps.incidents.list().find((i) => i.source_alert_id === alertId)?.id ?? null,
      writeLog: deps.log,
    });
    deps.alerts.setDispatcher(this.dispatcher);
  }

  static async open(deps: AlertingDeps): Promise<AlertingService> {
    const defaultKey = deps.settings.pagerdutyRoutingKey;
    const store = await JsonStore.open<ChannelsFile | null>(path.join(deps.stateDir, CHANNELS_FILE), {
      defaults: () => null,
      revive: (raw) => {
        const r = raw as Partial<ChannelsFile> | null;
        if (!r || typeof r !== 'object' || !Array.isArray(r.channels)) throw new Error('expected {channels[], use_env_fallback}');
        return { channels: r.channels.map((c, i) => parseChannel(c, i, () => defaultKey)), use_env_fallback: r.use_env_fallback === true };
      },
      onWarning: deps.log,
    });
    const [deliveries, slack] = await Promise.all([DeliveryLog.open(deps.stateDir, deps.settings.deliveryLogSize), SlackWizard.open(deps.stateDir, deps.settings, deps.outbound)]);
    return new AlertingService(deps, store, deliveries, slack);
  }

  /** Configured channels plus the Slack wizard's incoming webhook. */
  targets(): DeliveryTarget[] {
    const slack = this.slack.webhookUrl();
    return slack ? [...this.channels, { slack_webhook: { url: slack } }] : [...this.channels];
  }

  getChannels(): Record<string, unknown> {
    return {
      version: API_VERSION,
      channels: this.channels.map(channelView),
      use_env_fallback: this.useEnvFallback,
      persist_path: this.store.file,
    };
  }

  updateChannels(body: { channels: unknown[]; use_env_fallback?: boolean | undefined }): Record<string, unknown> {
    const keyFor = (url: string) => {
      const same = this.channels.find((c): c is Extract<AlertChannel, { pager_duty: unknown }> => typeof c === 'object' && 'pager_duty' in c && c.pager_duty.url === url);
      return same?.pager_duty.routing_key ?? this.deps.settings.pagerdutyRoutingKey;
    };
    const channels = body.channels.map((c, i) => parseChannel(c, i, keyFor));
    if (channels.length === 0) throw badRequest('at least one channel required (use log for local-only)');
    const useEnvFallback = body.use_env_fallback ?? false;
    // Live at once; the kernel answers only once the file is on disk (D10).
    this.channels = channels;
    this.useEnvFallback = useEnvFallback;
    this.store.replace({ channels, use_env_fallback: useEnvFallback });
    return { version: API_VERSION, ok: true, channel_count: channels.length };
  }

  integrations(facts: IntegrationFacts): Record<string, unknown> {
    const labels = this.channels.map(channelLabel);
    if (this.slack.webhookUrl()) labels.push(`slack:${this.slack.teamName() ?? 'webhook'}`);
    return {
      version: API_VERSION,
      alert_channels: labels,
      observability: {
        ...facts.observability,
        ...(this.deps.settings.grafanaUrl ? { grafana_url: this.deps.settings.grafanaUrl } : {}),
      },
      tenant_id: facts.tenantId,
      api_keys_loaded: facts.apiKeysLoaded,
    };
  }

  /** `GET /v1/alerts/{id}/deliveries`: every attempt, and whether some are still under way. */
  deliveriesOf(alertId: string): Record<string, unknown> {
    const alert = this.deps.alerts.get(alertId);
    const entries = this.deliveries.forAlert(alertId);
    if (!alert && entries.length === 0) throw notFound(`alert '${alertId}' not found`);
    return {
      version: API_VERSION,
      alert_id: alertId,
      delivered_via: alert?.delivered_via ?? [],
      pending: this.dispatcher.pending(alertId),
      deliveries: entries,
    };
  }

  /** The PagerDuty inbound webhook (AB §11.4): acknowledge or resolve, then echo the change to PagerDuty. */
  async pagerDutyWebhook(body: {
    event?: string | undefined;
    incident_id?: string | undefined;
    dedup_key?: string | undefined;
    assignee?: string | undefined;
    messages?: Array<{ event?: string | undefined; incident?: { incident_key?: string | undefined } | undefined }> | undefined;
  }): Promise<Record<string, unknown>> {
    let event: string | undefined;
    let ref: string | undefined;
    let assignee: string | undefined;
    if (body.event) {
      event = body.event;
      ref = body.incident_id;
      assignee = body.assignee;
    } else if (body.messages?.[0]?.event) {
      event = body.messages[0].event;
      ref = body.messages[0].incident?.incident_key;
    }
    if (!event) throw badRequest('missing event');
    ref = ref?.trim() || body.incident_id?.trim() || body.dedup_key?.trim();
    if (!ref) throw badRequest('missing incident_id or dedup_key');
    const lower = event.toLowerCase();
    const action = lower.includes('ack') ? 'acknowledge' : lower.includes('resolve') ? 'resolve' : null;
    if (!action) throw badRequest('unsupported event; use acknowledge or resolve');
    const incident = this.deps.incidents.applyPagerDuty(ref, action, assignee?.trim() || undefined);
    const syncedAt = Date.now();
    return {
      version: API_VERSION,
      ok: true,
      event,
      incident,
      synced_at_ms: syncedAt,
      pagerduty_outbound: await this.echoToPagerDuty(incident, lower.includes('resolve') || incident.status === 'resolved' ? 'resolve' : 'acknowledge'),
    };
  }

  private async echoToPagerDuty(incident: Incident, eventAction: 'acknowledge' | 'resolve'): Promise<Record<string, unknown>> {
    const url = this.deps.settings.pagerdutyUrl;
    if (!url) return { skipped: true, reason: 'SVC_ALERT_PAGERDUTY_URL unset' };
    const dedup = incident.pagerduty_dedup_key ?? incident.source_alert_id;
    if (!dedup) return { skipped: true, reason: 'no pagerduty dedup key on incident' };
    const body = {
      routing_key: this.deps.settings.pagerdutyRoutingKey,
      event_action: eventAction,
      dedup_key: dedup,
      payload: { summary: incident.title, severity: incident.severity, source: 'svc-control-center', custom_details: { incident_id: incident.id } },
    };
    try {
      const res = await this.deps.outbound.postJson(url, body);
      if (res.ok) return { ok: true, event_action: eventAction, url: redactUrl(url) };
      return { ok: false, event_action: eventAction, error: `HTTP ${res.status} from ${redactUrl(url)}` };
    } catch (err) {
      return { ok: false, event_action: eventAction, error: (err as Error).message.split(url).join(redactUrl(url)) };
    }
  }

  async close(): Promise<void> {
    await this.dispatcher.close();
    await Promise.all([this.store.close(), this.deliveries.close(), this.slack.close()]);
  }
}

