import type { Alert, AlertDispatcher } from '../observability/alerts.js';
import { alertLogLine } from '../observability/alerts.js';
import type { OutboundHttp } from '../outbound/outbound-http.js';
import type { AlertingSettings } from '../settings/settings.js';
import { channelLabel, shownUrl, targetUrl, type DeliveryTarget } from './channels.js';
import type { DeliveryLog } from './delivery-log.js';
import { sendMail } from './email.js';
import { alertJson, alertMail, pagerDutyEvent, slackText, teamsCard } from './payloads.js';

/** The outcome of one attempt. `retry` is false when another attempt cannot help (a 4xx, a dry run). */
interface Attempt {
  ok: boolean;
  status?: number | string;
  error?: string;
  retry: boolean;
  skipped?: boolean;
}

export interface DispatcherDeps {
  settings: AlertingSettings;
  outbound: OutboundHttp;
  log: DeliveryLog;
  /** The live targets: configured channels plus the stored Slack webhook. Read once per alert. */
  targets: () => DeliveryTarget[];
  /** The incident a critical alert opened, for the PagerDuty `custom_details.incident_id`. */
  incidentFor: (alertId: string) => string | null;
  writeLog: (line: string) => void;
}

/**
 * Delivers each alert to every live target (docs/operations.md § Alerting). The log channel is
 * written at once; every outbound channel is attempted up to `deliveryAttempts` times with exponential
 * backoff (`deliveryBackoffMs`, ×4 per attempt) in the background, each attempt recorded in the
 * delivery log with its target redacted. A channel that accepts the alert (HTTP 2xx, SMTP acceptance)
 * is added to the alert's `delivered_via`; one that never does is left out.
 */
export class ChannelDispatcher implements AlertDispatcher {
  private readonly inflight = new Map<string, Set<Promise<void>>>();
  private readonly sleeps = new Set<{ timer: NodeJS.Timeout; wake: () => void }>();
  private closed = false;

  constructor(private readonly deps: DispatcherDeps) {}

  dispatch(alert: Alert, delivered: (via: string) => void): string[] {
    const now: string[] = [];
    const later: DeliveryTarget[] = [];
    for (const target of this.deps.targets()) {
      if (target === 'log') {
        this.deps.writeLog(alertLogLine(alert));
        this.deps.log.append({ alert_id: alert.id, channel: 'log', attempt: 1, at_ms: Date.now(), ok: true });
        if (!now.includes('log')) now.push('log');
      } else later.push(target);
    }
    if (later.length > 0 && !this.closed) {
      const set = new Set<Promise<void>>();
      this.inflight.set(alert.id, set);
      for (const target of later) {
        // Started on the next turn: the alert is stored and its incident opened by then (the
        // PagerDuty body names the incident), and the raising code has its answer already.
        const run = new Promise<void>((resolve) => setImmediate(resolve))
          .then(() => this.deliver(alert, target, delivered))
          .catch((err: unknown) => this.deps.writeLog(`alert ${alert.id}: delivery failed unexpectedly: ${(err as Error).message}`))
          .finally(() => {
            set.delete(run);
            if (set.size === 0 && this.inflight.get(alert.id) === set) this.inflight.delete(alert.id);
          });
        set.add(run);
      }
    }
    return now;
  }

  /** Whether deliveries of this alert are still being attempted. */
  pending(alertId: string): boolean {
    return this.inflight.has(alertId);
  }

  private async deliver(alert: Alert, target: DeliveryTarget, delivered: (via: string) => void): Promise<void> {
    const label = channelLabel(target);
    const { deliveryAttempts, deliveryBackoffMs } = this.deps.settings;
    for (let attempt = 1; attempt <= deliveryAttempts && !this.closed; attempt++) {
      if (attempt > 1) await this.sleep(deliveryBackoffMs * 4 ** (attempt - 2));
      if (this.closed) break;
      const result = await this.attempt(alert, target);
      this.deps.log.append({
        alert_id: alert.id,
        channel: label,
        attempt,
        at_ms: Date.now(),
        ok: result.ok,
        ...(result.status !== undefined ? { status: result.status } : {}),
        ...(result.error !== undefined ? { error: this.redact(result.error, target) } : {}),
        ...(result.skipped ? { skipped: true } : {}),
      });
      if (result.ok) {
        delivered(label);
        return;
      }
      if (!result.retry) break;
    }
    if (!this.closed) this.deps.writeLog(`alert ${alert.id}: not delivered to ${label}`);
  }

  private async attempt(alert: Alert, target: DeliveryTarget): Promise<Attempt> {
    if (target === 'log') return { ok: true, retry: false };
    if ('email' in target) return this.email(alert, target.email.to);
    let body: unknown;
    if ('webhook' in target) body = target.webhook.url.includes('hooks.slack.com') ? { text: slackText(alert) } : alertJson(alert);
    else if ('slack_webhook' in target) body = { text: slackText(alert) };
    else if ('pager_duty' in target) body = pagerDutyEvent(alert, target.pager_duty.routing_key, this.deps.incidentFor(alert.id));
    else body = teamsCard(alert);
    try {
      const res = await this.deps.outbound.postJson(targetUrl(target)!, body);
      if (res.ok) return { ok: true, status: res.status, retry: false };
      // A refusal of the request itself will not change; overload, timeouts and server errors may.
      const retry = res.status >= 500 || res.status === 408 || res.status === 429;
      return { ok: false, status: res.status, error: `HTTP ${res.status}`, retry };
    } catch (err) {
      return { ok: false, error: (err as Error).message, retry: true };
    }
  }

  private async email(alert: Alert, to: string): Promise<Attempt> {
    const { smtp, emailDryRun } = this.deps.settings;
    const mail = alertMail(alert);
    if (emailDryRun || !smtp.host) {
      // Dry run (or no server): the mail is written to the log, and is not counted as delivered.
      this.deps.writeLog(`alert e-mail (dry run, not sent) to ${to}: ${mail.subject}`);
      return { ok: false, skipped: true, retry: false, error: smtp.host ? 'dry run (SVC_ALERT_EMAIL_DRY_RUN): logged, not sent' : 'no SVC_SMTP_HOST: logged, not sent' };
    }
    const result = await sendMail({ ...smtp, host: smtp.host }, { to, ...mail });
    return result.ok ? { ok: true, status: result.detail, retry: false } : { ok: false, error: result.detail, retry: true };
  }

  /** Error texts of the HTTP client name the URL: show it redacted, like every other read. */
  private redact(text: string, target: DeliveryTarget): string {
    const url = targetUrl(target);
    return url ? text.split(url).join(shownUrl(target)!) : text;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const entry = {
        timer: setTimeout(() => {
          this.sleeps.delete(entry);
          resolve();
        }, ms),
        wake: resolve,
      };
      entry.timer.unref();
      this.sleeps.add(entry);
    });
  }

  /** Stops retrying and waits (briefly) for attempts under way; the agent is shutting down. */
  async close(): Promise<void> {
    this.closed = true;
    for (const s of this.sleeps) {
      clearTimeout(s.timer);
      s.wake();
    }
    this.sleeps.clear();
    const all = [...this.inflight.values()].flatMap((s) => [...s]);
    await Promise.race([Promise.all(all), new Promise((r) => setTimeout(r, 2000).unref())]);
  }
}
