import crypto from 'node:crypto';
import path from 'node:path';
import { API_VERSION } from '../../api/versions.js';
import { badRequest } from '../core/errors.js';
import type { OutboundHttp } from '../outbound/outbound-http.js';
import { constantTimeEqual } from '../security/constant-time.js';
import type { AlertingSettings } from '../settings/settings.js';
import { JsonStore } from '../state/json-store.js';
import { SLACK_CALLBACK_PAGE_PATH } from './slack-landing-page.js';

/** `<state dir>/admin-slack.json`. The client secret and the webhook URL are write-only. */
export interface SlackStored {
  configured: boolean;
  team_name?: string;
  webhook_url?: string;
  webhook_url_set: boolean;
  oauth_client_id?: string;
  oauth_client_secret?: string;
  oauth_client_secret_set: boolean;
  oauth_redirect_uri?: string;
  oauth_state?: string;
  /** Ours: a pending state is good for this long (a flow left half-way cannot be finished days later). */
  oauth_state_expires_at_ms?: number;
}

export const SLACK_FILE = 'admin-slack.json';
const DEFAULT_REDIRECT_URI = `http://127.0.0.1:8080${SLACK_CALLBACK_PAGE_PATH}`;
const AUTHORIZE_URL = 'https://slack.com/oauth/v2/authorize';
const STATE_TTL_MS = 15 * 60_000;

/** Percent-encodes everything but the unreserved characters (RFC 3986 §2.3); `encodeURIComponent` leaves `!'()*`. */
function enc(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function httpUrl(value: string, name: string): string {
  const v = value.trim();
  try {
    const u = new URL(v);
    if (u.protocol === 'http:' || u.protocol === 'https:') return v;
  } catch {
    /* falls through to the refusal */
  }
  throw badRequest(`${name} must be an absolute http:// or https:// URL`);
}

/**
 * The Slack setup wizard (docs/operations.md § Alerting, Slack): stored settings, the OAuth v2 flow
 * with a random single-use `state` (`svc-` + 16 random bytes, cleared once used, as the OIDC flow's
 * PKCE verifier), and the stored incoming webhook, which the dispatcher delivers to.
 */
export class SlackWizard {
  private constructor(
    private readonly store: JsonStore<SlackStored>,
    private readonly settings: AlertingSettings,
    private readonly outbound: OutboundHttp,
  ) {}

  static async open(stateDir: string, settings: AlertingSettings, outbound: OutboundHttp): Promise<SlackWizard> {
    const store = await JsonStore.open<SlackStored>(path.join(stateDir, SLACK_FILE), {
      defaults: () => ({ configured: false, webhook_url_set: false, oauth_client_secret_set: false }),
      revive: (raw) => {
        if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new Error('expected an object');
        const r = raw as SlackStored;
        return { ...r, configured: Boolean(r.configured), webhook_url_set: Boolean(r.webhook_url_set && r.webhook_url), oauth_client_secret_set: Boolean(r.oauth_client_secret_set && r.oauth_client_secret) };
      },
    });
    return new SlackWizard(store, settings, outbound);
  }

  get file(): string {
    return this.store.file;
  }

  /** The stored incoming webhook, when one is set (a delivery target). */
  webhookUrl(): string | null {
    const d = this.store.data;
    return d.webhook_url_set && d.webhook_url ? d.webhook_url : null;
  }

  teamName(): string | null {
    return this.store.data.team_name ?? null;
  }

  view(): Record<string, unknown> {
    const d = this.store.data;
    return {
      version: API_VERSION,
      configured: d.configured,
      team_name: d.team_name ?? null,
      webhook_url_set: d.webhook_url_set,
      oauth_client_id: d.oauth_client_id ?? null,
      oauth_client_secret_set: d.oauth_client_secret_set,
      oauth_redirect_uri: d.oauth_redirect_uri ?? null,
      persist_path: this.store.file,
    };
  }

  /** Non-empty fields overwrite; empty strings are ignored (as in the reference, a field cannot be cleared). */
  update(body: { webhook_url?: string | undefined; oauth_client_id?: string | undefined; oauth_client_secret?: string | undefined; team_name?: string | undefined; oauth_redirect_uri?: string | undefined }): Record<string, unknown> {
    const given = (v: string | undefined) => (v !== undefined && v.trim() !== '' ? v.trim() : null);
    const webhook = given(body.webhook_url);
    const redirect = given(body.oauth_redirect_uri);
    // Checked before anything changes: a refused request leaves the settings as they were.
    if (webhook) httpUrl(webhook, 'webhook_url');
    if (redirect) httpUrl(redirect, 'oauth_redirect_uri');
    this.store.change((d) => {
      if (webhook) {
        d.webhook_url = webhook;
        d.webhook_url_set = true;
      }
      const id = given(body.oauth_client_id);
      if (id) d.oauth_client_id = id;
      const secret = given(body.oauth_client_secret);
      if (secret) {
        d.oauth_client_secret = secret;
        d.oauth_client_secret_set = true;
      }
      const team = given(body.team_name);
      if (team) d.team_name = team;
      if (redirect) d.oauth_redirect_uri = redirect;
      d.configured = d.webhook_url_set || Boolean(d.oauth_client_id) || d.configured;
    });
    const d = this.store.data;
    return { version: API_VERSION, ok: true, configured: d.configured, webhook_url_set: d.webhook_url_set, oauth_client_id: d.oauth_client_id ?? null, oauth_client_secret_set: d.oauth_client_secret_set };
  }

  private redirectUri(fromBody?: string): string {
    const body = fromBody?.trim();
    if (body) return httpUrl(body, 'redirect_uri');
    return this.store.data.oauth_redirect_uri ?? this.settings.slackRedirectUri ?? DEFAULT_REDIRECT_URI;
  }

  authorizeUrl(body: { redirect_uri?: string | undefined }, now = Date.now()): Record<string, unknown> {
    const clientId = this.store.data.oauth_client_id;
    if (!clientId) throw badRequest('oauth_client_id not configured');
    const redirect = this.redirectUri(body.redirect_uri);
    const state = `svc-${crypto.randomBytes(16).toString('hex')}`;
    this.store.change((d) => {
      d.oauth_state = state;
      d.oauth_state_expires_at_ms = now + STATE_TTL_MS;
      d.oauth_redirect_uri = redirect;
    });
    const url = `${AUTHORIZE_URL}?client_id=${enc(clientId)}&scope=${enc('incoming-webhook,chat:write')}&redirect_uri=${enc(redirect)}&state=${enc(state)}`;
    return { version: API_VERSION, authorize_url: url, state, redirect_uri: redirect };
  }

  async complete(body: { code: string; state?: string | undefined }, now = Date.now()): Promise<Record<string, unknown>> {
    const code = body.code.trim();
    if (!code) throw badRequest('code required');
    const d = this.store.data;
    // Ours: a callback needs the pending state of a flow this agent started, so a replayed or forged
    // callback (whose state was already used, or never issued) is refused before Slack is asked.
    if (!d.oauth_state) throw badRequest('oauth state mismatch (no Slack authorization pending; request POST /v1/admin/slack/oauth-url first)');
    if (!constantTimeEqual(body.state ?? '', d.oauth_state)) throw badRequest('oauth state mismatch');
    if (d.oauth_state_expires_at_ms !== undefined && now > d.oauth_state_expires_at_ms) {
      this.clearState();
      throw badRequest('oauth state expired; request a new authorize URL');
    }
    if (!d.oauth_client_id) throw badRequest('oauth_client_id not configured');
    if (!d.oauth_client_secret) throw badRequest('oauth_client_secret not configured');
    // Single use: the state is spent once the code goes to Slack, whatever Slack answers.
    this.clearState();
    const form = new URLSearchParams({ code, client_id: d.oauth_client_id, client_secret: d.oauth_client_secret, redirect_uri: this.redirectUri() }).toString();
    let reply: Record<string, unknown>;
    try {
      const res = await this.outbound.request(`${this.settings.slackApiUrl}/oauth.v2.access`, { method: 'POST', body: form, contentType: 'application/x-www-form-urlencoded' });
      try {
        reply = JSON.parse(res.text) as Record<string, unknown>;
      } catch {
        throw new Error(`HTTP ${res.status} without a JSON reply`);
      }
    } catch (err) {
      throw badRequest(`slack oauth failed: ${(err as Error).message}`);
    }
    if (reply['ok'] !== true) throw badRequest(typeof reply['error'] === 'string' && reply['error'] ? reply['error'] : 'slack oauth rejected');
    const team = (reply['team'] as { name?: unknown } | undefined)?.name;
    const hook = (reply['incoming_webhook'] as { url?: unknown } | undefined)?.url;
    this.store.change((s) => {
      if (typeof team === 'string' && team) s.team_name = team;
      if (typeof hook === 'string' && /^https?:\/\//i.test(hook)) {
        s.webhook_url = hook;
        s.webhook_url_set = true;
      }
      s.configured = true;
    });
    const s = this.store.data;
    return { version: API_VERSION, ok: true, configured: s.configured, team_name: s.team_name ?? null, webhook_url_set: s.webhook_url_set };
  }

  private clearState(): void {
    this.store.change((d) => {
      delete d.oauth_state;
      delete d.oauth_state_expires_at_ms;
    });
  }

  close(): Promise<void> {
    return this.store.close();
  }
}
