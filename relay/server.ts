import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import path from 'node:path';
import { createAdaptorServer } from '@hono/node-server';
import { Hono, type Context } from 'hono';
import { createWebSocketStream, WebSocketServer, type WebSocket } from 'ws';
import { parseJsonObject } from '../agent/core/json-body.js';
import { isPanelPath, markServedBy, PANEL_PAGE_PATHS, panelResponse } from '../agent/core/panel-files.js';
import { parseInput } from '../agent/core/validate.js';
import { ApiError, badRequest, forbidden, notFound, payloadTooLarge, tenantMismatch, unauthorized } from '../agent/core/errors.js';
import { ApiKeyStore, assignableRole, ENV_KEY_ID } from '../agent/security/api-keys.js';
import { bearerToken } from '../agent/security/credentials.js';
import type { Principal } from '../agent/security/principal.js';
import { canGrant } from '../agent/security/rbac.js';
import { resolveSecrets } from '../agent/security/secrets.js';
import { createAdminApiKey } from '../api/domains/admin.js';
import { createRelayEnrollment, getRelayHealth, listRelayFleetAgents, queryRelayFleet, revokeRelayEnrollment, streamRelayFleet } from '../api/domains/relay.js';
import { ERROR_CODES, type ErrorCode } from '../api/errors.js';
import { TOPIC_ID, type RelayResponse } from '../api/relay-protocol.js';
import { API_VERSION } from '../api/versions.js';
import { EmbeddedBroker } from './broker.js';
import { Enrollments } from './enrollments.js';
import { RelayKeys } from './keys.js';
import { PresenceView, type FleetMemberEvent } from './presence.js';
import { GatewayTimeout, Trunk } from './trunk.js';

export interface HostPort {
  host: string;
  port: number;
}

export interface RelayOptions {
  stateDir: string;
  bind: HostPort;
  /** The embedded broker's TCP listener; ignored with `mqttUrl`. */
  mqttBind: HostPort;
  /** An external broker: no embedded broker then. */
  mqttUrl: string | null;
  /** This node's name (reply topics, `relay:<node>`); default a random one. */
  node?: string;
  /** Tenant of the `SVC_API_KEY` relay administrator and of anonymous callers. */
  tenantId: string;
  /** `SVC_API_KEY`: the relay administrator. */
  apiKey: string | null;
  /** `SVC_API_KEY_PEPPER`, else the generated one in `<state dir>/secrets.json`. */
  pepper: string | null;
  requestTimeoutMs?: number;
  maxBodyBytes?: number;
  queryConcurrency?: number;
  log?: (line: string) => void;
}

/** Request headers never forwarded to an agent: the caller's relay credential and hop-by-hop headers. */
const DROP_REQUEST = new Set(['authorization', 'cookie', 'host', 'connection', 'keep-alive', 'content-length', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'proxy-authorization', 'proxy-connection']);
const DROP_RESPONSE = new Set(['connection', 'keep-alive', 'content-length', 'transfer-encoding', 'upgrade', 'te', 'trailer']);

export function agentOffline(agentId: string): ApiError {
  return new ApiError(503, 'agent_offline', `agent '${agentId}' is offline`);
}
export function gatewayTimeout(agentId: string, ms: number): ApiError {
  return new ApiError(504, 'gateway_timeout', `agent '${agentId}' did not answer within ${ms} ms`);
}

function errorJson(c: Context, err: ApiError): Response {
  return c.json(err.toEnvelope(), err.status as 400);
}

/** Runs `work` over `items` with at most `limit` in flight. */
async function mapBounded<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const runners = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await work(items[i]!);
    }
  });
  await Promise.all(runners);
  return out;
}

/**
 * One relay node (docs/relay.md): HTTP API (Hono) with the relay routes of `api/domains/relay.ts`
 * and the forwarding route `ANY /agents/{agent_id}/v1/...`; the embedded aedes broker (TCP and
 * WebSocket `/mqtt`) unless an external broker URL is given; an MQTT client (the trunk) that keeps
 * the presence view and carries requests.
 */
export class Relay {
  readonly node: string;
  readonly presence: PresenceView;
  private readonly fleetSockets = new Set<{ tenantId: string; ws: WebSocket }>();
  /** Relayed agent streams open on this node (closed when their agent goes offline). */
  private readonly agentStreams = new Set<{ tenantId: string; agentId: string; close: (code: number, reason: string) => void }>();
  private server: http.Server | null = null;
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 * 1024 });
  private readonly streamWss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });
  httpPort = 0;
  mqttPort = 0;
  private keysMtime = 0;

  private constructor(
    private readonly options: Required<Omit<RelayOptions, 'node' | 'log'>> & { log: (line: string) => void },
    node: string,
    readonly keys: RelayKeys,
    public apiKeys: ApiKeyStore,
    private readonly pepper: string,
    readonly enrollments: Enrollments,
    readonly broker: EmbeddedBroker | null,
    private trunk: Trunk | null,
  ) {
    this.node = node;
    this.presence = new PresenceView(256, options.log);
  }

  static async start(input: RelayOptions): Promise<Relay> {
    const log = input.log ?? ((line: string) => process.stderr.write(`${line}\n`));
    const options = {
      requestTimeoutMs: 30_000,
      maxBodyBytes: 1024 * 1024,
      queryConcurrency: 16,
      ...input,
      log,
    };
    const stateDir = path.resolve(options.stateDir);
    const node = input.node && TOPIC_ID.test(input.node) ? input.node : `n-${crypto.randomBytes(4).toString('hex')}`;
    const keys = await RelayKeys.open(stateDir);
    const secrets = resolveSecrets({ stateDir, pepper: options.pepper, session: { secret: null } as never, auditSigningKey: null }, log);
    const apiKeys = await ApiKeyStore.open({ file: path.join(stateDir, 'api-keys.json'), pepper: secrets.pepper, legacyPepper: null, tenantId: options.tenantId, envKey: options.apiKey, log });
    const enrollments = await Enrollments.open(stateDir, keys, log);
    const broker = options.mqttUrl ? null : await EmbeddedBroker.create({ enrollments, nodeSecret: keys.nodeSecret, log });
    const relay = new Relay({ ...options, stateDir, mqttUrl: options.mqttUrl ?? null }, node, keys, apiKeys, secrets.pepper, enrollments, broker, null);
    try {
      relay.keysMtime = fs.statSync(apiKeys.file).mtimeMs;
    } catch {
      /* no keys file yet */
    }
    relay.presence.onMember((e) => relay.broadcastMember(e));
    if (broker) relay.mqttPort = await broker.listen(options.mqttBind.host, options.mqttBind.port);
    await relay.listenHttp();
    const host = options.mqttBind.host === '0.0.0.0' || options.mqttBind.host === '::' ? '127.0.0.1' : options.mqttBind.host;
    const url = options.mqttUrl ?? `mqtt://${host.includes(':') ? `[${host}]` : host}:${relay.mqttPort}`;
    const hasUser = options.mqttUrl ? new URL(options.mqttUrl).username !== '' : false;
    relay.trunk = await Trunk.connect({ url, node, log, ...(hasUser ? {} : { username: `relay:${node}`, password: keys.nodeSecret }) });
    relay.trunk.on((e) => {
      if (e.kind === 'reset') relay.presence.reset();
      else if (e.kind === 'presence') {
        relay.presence.update(e.tenantId, e.agentId, e.presence);
        if (!e.presence?.online) relay.closeAgentStreams(e.tenantId, e.agentId);
      }
      else relay.broadcastEvent(e.tenantId, e.agentId, e.frame as unknown as Record<string, unknown>);
    });
    return relay;
  }

  get baseUrl(): string {
    return `http://${this.options.bind.host}:${this.httpPort}`;
  }

  private async listenHttp(): Promise<void> {
    const app = this.app();
    const server = createAdaptorServer({ fetch: app.fetch }) as http.Server;
    server.on('upgrade', (req, socket, head) => this.onUpgrade(req, socket as net.Socket, head));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.options.bind.port, this.options.bind.host, () => resolve());
    });
    this.httpPort = (server.address() as net.AddressInfo).port;
  }

  /**
   * Nodes sharing a state directory share its keys file: a node re-reads it when another node
   * changed it (checked on an unknown token and before a key is created), so a key created on one
   * node works on every node without a restart.
   */
  private async reloadKeysIfChanged(): Promise<void> {
    let mtime = 0;
    try {
      mtime = fs.statSync(this.apiKeys.file).mtimeMs;
    } catch {
      return;
    }
    if (mtime === this.keysMtime) return;
    await this.apiKeys.flush();
    this.apiKeys = await ApiKeyStore.open({ file: this.apiKeys.file, pepper: this.pepper, legacyPepper: null, tenantId: this.options.tenantId, envKey: this.options.apiKey, log: this.options.log });
    this.keysMtime = mtime;
  }

  /** The caller: an API key of the relay (hashed, with role and tenant), or anonymous; a bad credential is 401. */
  private async caller(authorization: string | null | undefined): Promise<Principal | null | ApiError> {
    if (!authorization) return null;
    const token = bearerToken(authorization);
    if (!token) return unauthorized();
    let p = this.apiKeys.authenticate(token);
    if (!p) {
      await this.reloadKeysIfChanged();
      p = this.apiKeys.authenticate(token);
    }
    return p ?? unauthorized();
  }

  private async requirePrincipal(c: Context): Promise<Principal | ApiError> {
    const p = await this.caller(c.req.header('authorization'));
    if (p === null) return unauthorized();
    return p;
  }

  private async requireAdmin(c: Context): Promise<Principal | ApiError> {
    const p = await this.requirePrincipal(c);
    if (p instanceof ApiError) return p;
    return p.role === 'administrator' ? p : forbidden('administrator role required');
  }

  /** The `SVC_API_KEY` relay administrator acts on every tenant; other administrators on their own. */
  private static isRelayAdmin(p: Principal): boolean {
    return p.key_id === ENV_KEY_ID && p.role === 'administrator';
  }

  private async jsonBody(c: Context): Promise<unknown> {
    const text = await c.req.text();
    if (Buffer.byteLength(text) > this.options.maxBodyBytes) throw payloadTooLarge();
    // The agent's body rule (docs/wire-decisions.md D3): empty is `{}`, anything but a JSON object is 400.
    return parseJsonObject(text);
  }

  private app(): Hono {
    const app = new Hono();
    app.onError((err, c) => {
      if (err instanceof ApiError) return errorJson(c, err);
      this.options.log(`relay: ${(err as Error).stack ?? String(err)}`);
      return errorJson(c, new ApiError(500, 'internal_error', 'internal error'));
    });
    app.notFound((c) => errorJson(c, notFound()));

    // The web panel (docs/panel.md § Served by a relay): the same build the agent serves, at the same paths, its
    // page marked `svc-served-by: relay` so it opens the fleet view. The files are public, as on the agent.
    app.use('*', async (c, next) => {
      const pathname = new URL(c.req.url).pathname;
      if ((c.req.method === 'GET' || c.req.method === 'HEAD') && isPanelPath(pathname)) {
        return (await panelResponse(c.req.method, pathname, {}, undefined, { servedBy: 'relay' })) ?? errorJson(c, notFound());
      }
      await next();
    });

    app.get(getRelayHealth.path, (c) =>
      c.json({ version: API_VERSION, ok: true, status: 'ok', node: this.node, broker: this.broker ? 'embedded' : 'external', mqtt_connected: this.trunk?.connected ?? false, agents_known: this.presence.size }),
    );

    app.post(createAdminApiKey.path, async (c) => {
      const p = await this.requireAdmin(c);
      if (p instanceof ApiError) throw p;
      const body = parseInput(createAdminApiKey.body, await this.jsonBody(c), 'body');
      await this.reloadKeysIfChanged();
      const role = assignableRole(body.role);
      if (!canGrant(p.role, role)) throw forbidden(`a ${p.role} caller cannot grant the ${role} role`);
      const tenant = body.tenant_id?.trim() || p.tenant_id;
      if (tenant !== p.tenant_id && !Relay.isRelayAdmin(p)) throw tenantMismatch();
      const { record, token } = this.apiKeys.create({ ...body, tenant_id: tenant });
      await this.apiKeys.flush();
      this.keysMtime = fs.statSync(this.apiKeys.file).mtimeMs;
      return c.json({ version: API_VERSION, ok: true, key_id: record.key_id, token, role: record.role, label: record.label, tenant_id: record.tenant_id }, 201);
    });

    app.post(createRelayEnrollment.path, async (c) => {
      const p = await this.requireAdmin(c);
      if (p instanceof ApiError) throw p;
      const { tenant_id, agent_id, ttl_secs } = parseInput(createRelayEnrollment.body, await this.jsonBody(c), 'body');
      if (tenant_id !== p.tenant_id && !Relay.isRelayAdmin(p)) throw tenantMismatch();
      const issued = await this.enrollments.issue(tenant_id, agent_id, ttl_secs ?? 86400);
      this.options.log(`enrolled agent ${agent_id} of tenant ${tenant_id} until ${issued.expires_at} (by ${p.key_id})`);
      return c.json({ version: API_VERSION, ok: true, ...issued }, 201);
    });

    app.delete(revokeRelayEnrollment.path.replace('{agent_id}', ':agent_id'), async (c) => {
      const p = await this.requireAdmin(c);
      if (p instanceof ApiError) throw p;
      const agentId = c.req.param('agent_id') ?? '';
      if (!TOPIC_ID.test(agentId)) throw badRequest('agent_id: letters, digits, . _ - (1..128)');
      const asked = c.req.query('tenant_id');
      const tenant = Relay.isRelayAdmin(p) ? (asked || '*') : p.tenant_id;
      if (asked && asked !== tenant) throw tenantMismatch();
      const rev = await this.enrollments.revoke(tenant, agentId);
      const closed = this.broker ? this.broker.disconnectAgent(tenant, agentId) : 0;
      this.options.log(`revoked enrollment of agent ${agentId} (tenant ${tenant}) by ${p.key_id}; ${closed} connection(s) closed`);
      return c.json({ version: API_VERSION, ok: true, agent_id: agentId, tenant_id: tenant, revoked_at: rev.revoked_at, connections_closed: closed, enforced_by: this.broker ? 'embedded_broker' : 'external_broker_auth_plugin' });
    });

    app.get(listRelayFleetAgents.path, async (c) => {
      const p = await this.requirePrincipal(c);
      if (p instanceof ApiError) throw p;
      return c.json({ version: API_VERSION, ok: true, tenant_id: p.tenant_id, agents: this.presence.list(p.tenant_id) });
    });

    app.get(streamRelayFleet.path, (c) => {
      // Reached only without an Upgrade header (upgrades are handled on the server's upgrade event).
      return errorJson(c, notFound());
    });

    app.post(queryRelayFleet.path, async (c) => {
      const p = await this.requirePrincipal(c);
      if (p instanceof ApiError) throw p;
      const { path: target, agents } = parseInput(queryRelayFleet.body, await this.jsonBody(c), 'body');
      const ids = [...new Set(agents ?? this.presence.list(p.tenant_id).map((a) => a.agent_id))];
      const results = await mapBounded(ids, this.options.queryConcurrency, async (agentId) => {
        try {
          const res = await this.forward(p, p.tenant_id, agentId, 'GET', target, {}, undefined);
          return { agent_id: agentId, status: res.status, body: decodeBody(res) };
        } catch (err) {
          const e = err instanceof ApiError ? err : new ApiError(502, 'upstream_error', (err as Error).message);
          return { agent_id: agentId, error: e.message, code: e.code, status: e.status };
        }
      });
      const failed = results.filter((r) => 'error' in r).length;
      return c.json({ version: API_VERSION, ok: true, path: target, results, succeeded: results.length - failed, failed });
    });

    // `/agents/{id}` → `/agents/{id}/`: the agent's panel refers to its files relatively.
    app.get('/agents/:agent_id', (c) => new Response(null, { status: 308, headers: { location: `${encodeURIComponent(c.req.param('agent_id'))}/` } }));

    app.all('/agents/:agent_id/*', async (c) => {
      const agentId = c.req.param('agent_id') ?? '';
      const caller = await this.caller(c.req.header('authorization'));
      if (caller instanceof ApiError) throw caller;
      const url = new URL(c.req.url);
      const prefix = `/agents/${encodeURIComponent(agentId)}`;
      const rest = url.pathname.startsWith(prefix) ? url.pathname.slice(prefix.length) : '';
      // The agent's API, and its panel's files (GET/HEAD) so its panel opens through the relay (docs/panel.md § Served by a relay).
      const panelFile = (c.req.method === 'GET' || c.req.method === 'HEAD') && isPanelPath(rest);
      if (!rest.startsWith('/v1/') && rest !== '/v1' && !panelFile) throw notFound();
      const headers: Record<string, string> = {};
      c.req.raw.headers.forEach((v, k) => {
        if (!DROP_REQUEST.has(k.toLowerCase())) headers[k.toLowerCase()] = v;
      });
      let body: Buffer | undefined;
      if (c.req.method !== 'GET' && c.req.method !== 'HEAD') {
        const declared = Number(c.req.header('content-length') ?? 0);
        if (declared > this.options.maxBodyBytes) throw payloadTooLarge();
        const buf = Buffer.from(await c.req.arrayBuffer());
        if (buf.length > this.options.maxBodyBytes) throw payloadTooLarge();
        if (buf.length > 0) body = buf;
      }
      const tenant = caller?.tenant_id ?? this.options.tenantId;
      const res = await this.forward(caller, tenant, agentId, c.req.method, `${rest}${url.search}`, headers, body);
      const out = new Headers();
      for (const [k, v] of Object.entries(res.headers)) if (!DROP_RESPONSE.has(k.toLowerCase()) && typeof v === 'string') out.set(k, v);
      out.set('x-svc-relay-node', this.node);
      let bytes: Buffer | null = res.body_b64 ? Buffer.from(res.body_b64, 'base64') : null;
      // The agent's page, marked as reached through this relay: its panel then signs in with relay
      // keys only and offers no OIDC sign-in (whose session the relay would not know; docs/panel.md).
      if (bytes && panelFile && PANEL_PAGE_PATHS.has(rest) && res.status === 200 && /^text\/html/.test(out.get('content-type') ?? '')) {
        bytes = markServedBy(bytes, 'relay-agent');
      }
      const noBody = res.status === 204 || res.status === 304 || c.req.method === 'HEAD' || res.status < 200;
      return new Response(noBody ? null : bytes, { status: res.status, headers: out });
    });
    return app;
  }

  /**
   * Tenant routing and the trunk round trip. An agent of another tenant (or unknown) is 404, as if
   * absent; offline is 503 `agent_offline`; no answer in time is 504 `gateway_timeout`.
   */
  async forward(caller: Principal | null, tenantId: string, agentId: string, method: string, target: string, headers: Record<string, string>, body: Buffer | undefined): Promise<RelayResponse> {
    const view = TOPIC_ID.test(agentId) ? this.presence.get(tenantId, agentId) : null;
    if (!view) throw notFound(`agent '${agentId}' not found`);
    if (!view.online) throw agentOffline(agentId);
    if (!this.trunk) throw new ApiError(503, 'agent_offline', 'the relay is not connected to its broker');
    const obo = caller ? await this.keys.onBehalfOf(caller, agentId) : null;
    try {
      return await this.trunk.request(tenantId, agentId, { method, path: target, headers, ...(body ? { body_b64: body.toString('base64') } : {}), obo }, this.options.requestTimeoutMs);
    } catch (err) {
      if (err instanceof GatewayTimeout) throw gatewayTimeout(agentId, this.options.requestTimeoutMs);
      throw new ApiError(502, 'upstream_error', `relay trunk: ${(err as Error).message}`);
    }
  }

  private onUpgrade(req: http.IncomingMessage, socket: net.Socket, head: Buffer): void {
    const url = new URL(req.url ?? '/', 'http://relay');
    const refuse = (status: number, err: ApiError) => {
      const body = JSON.stringify(err.toEnvelope());
      socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
    };
    if (url.pathname === '/mqtt') {
      const broker = this.broker;
      if (!broker) return refuse(404, notFound('no embedded broker on this relay (external broker)'));
      return this.wss.handleUpgrade(req, socket, head, (ws) => {
        const stream = createWebSocketStream(ws);
        stream.on('error', () => stream.destroy());
        broker.aedes.handle(stream, req);
      });
    }
    if (url.pathname === streamRelayFleet.path) {
      const token = url.searchParams.get('access_token');
      const header = req.headers.authorization ?? (token ? `Bearer ${token}` : undefined);
      void this.caller(header).then((p) => {
        if (p instanceof ApiError) return refuse(401, p);
        if (!p) return refuse(401, unauthorized());
        this.streamWss.handleUpgrade(req, socket, head, (ws) => this.openFleetStream(p.tenant_id, ws));
      });
      return;
    }
    const m = /^\/agents\/([^/]+)(\/v1\/stream\/telemetry)$/.exec(url.pathname);
    if (m) {
      let agentId: string;
      try {
        agentId = decodeURIComponent(m[1]!);
      } catch {
        return refuse(404, notFound());
      }
      void this.openAgentStream(req, socket, head, url, agentId, m[2]!).catch((err: unknown) => {
        this.options.log(`relay: stream upgrade failed: ${(err as Error).message}`);
        if (socket.destroyed || socket.writableEnded) return;
        refuse(502, new ApiError(502, 'upstream_error', `relay trunk: ${(err as Error).message}`));
      });
      return;
    }
    refuse(404, notFound());
  }

  /**
   * `WS /agents/{agent_id}/v1/stream/telemetry` (docs/relay.md § Streams): tenant routing as for
   * forwarding (404 / 503 before the upgrade), then stream_open with a fresh on-behalf-of token; the
   * agent opens its own LAN stream as that principal. The upgrade completes on the agent's first frame
   * (its `hello`), so an agent-side refusal reaches the client as the same HTTP status the LAN gives;
   * no frame within the request timeout is 504.
   */
  private async openAgentStream(req: http.IncomingMessage, socket: net.Socket, head: Buffer, url: URL, agentId: string, streamPath: string): Promise<void> {
    const refuse = (err: ApiError) => {
      const body = JSON.stringify(err.toEnvelope());
      if (!socket.destroyed && !socket.writableEnded) socket.end(`HTTP/1.1 ${err.status} ${http.STATUS_CODES[err.status]}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
    };
    socket.on('error', () => socket.destroy());
    const token = url.searchParams.get('access_token');
    const caller = await this.caller(req.headers.authorization ?? (token ? `Bearer ${token}` : undefined));
    if (caller instanceof ApiError) return refuse(caller);
    const tenantId = caller?.tenant_id ?? this.options.tenantId;
    const view = TOPIC_ID.test(agentId) ? this.presence.get(tenantId, agentId) : null;
    if (!view) return refuse(notFound(`agent '${agentId}' not found`));
    if (!view.online) return refuse(agentOffline(agentId));
    const trunk = this.trunk;
    if (!trunk) return refuse(new ApiError(503, 'agent_offline', 'the relay is not connected to its broker'));
    // The relay credential never travels to the agent: the on-behalf-of token replaces it.
    const query = new URLSearchParams(url.searchParams);
    query.delete('access_token');
    const target = `${streamPath}${query.size ? `?${query.toString()}` : ''}`;
    const obo = caller ? await this.keys.onBehalfOf(caller, agentId) : null;
    const timeoutMs = this.options.requestTimeoutMs;
    let ws: WebSocket | null = null;
    let early: string[] = [];
    const id = crypto.randomUUID();
    let settled = false;
    const timer = setTimeout(() => {
      if (settled) return;
      settled = true;
      trunk.closeStream(id);
      refuse(gatewayTimeout(agentId, timeoutMs));
    }, timeoutMs);
    let accepted = false;
    let closedEarly: { code: number; reason: string } | null = null;
    const accept = () => {
      settled = true;
      accepted = true;
      clearTimeout(timer);
      this.streamWss.handleUpgrade(req, socket, head, (client) => {
        ws = client;
        const sid = id;
        const entry = { tenantId, agentId, close: (code: number, reason: string) => client.close(code, reason) };
        this.agentStreams.add(entry);
        client.on('message', (data, isBinary) => {
          if (!isBinary) trunk.streamData(sid, data.toString());
        });
        const gone = () => {
          this.agentStreams.delete(entry);
          trunk.closeStream(sid);
        };
        client.on('close', gone);
        client.on('error', gone);
        for (const d of early) client.send(d);
        early = [];
        if (closedEarly) client.close(closedEarly.code, closedEarly.reason);
      });
    };
    socket.once('close', () => {
      if (!settled) {
        settled = true;
        clearTimeout(timer);
        trunk.closeStream(id);
      }
    });
    const opening = trunk.openStream(id, tenantId, agentId, { path: target, obo }, timeoutMs, (e) => {
      if (e.kind === 'frame') {
        if (ws) {
          // The agent's own backpressure sees the trunk, not this client: a client that cannot keep up is closed.
          if (ws.bufferedAmount > 8 * 1024 * 1024) return ws.close(1013, 'client too slow');
          if (ws.readyState === ws.OPEN) ws.send(e.data);
          return;
        }
        if (settled && !accepted) return;
        early.push(e.data);
        if (!accepted) accept();
        return;
      }
      if (ws) return ws.close(closeCode(e.code), closeReason(e.reason));
      if (accepted) {
        // Closed before the upgrade completed: the client gets the frames, then the close.
        closedEarly = { code: closeCode(e.code), reason: closeReason(e.reason) };
        return;
      }
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      // Refused by the agent before its stream opened: the same HTTP status its LAN listener answered.
      // The agent sends `4000 + status` with the reason `<status> <code>`; 1013 is its stream limit.
      const status = e.code >= 4100 && e.code < 4600 ? e.code - 4000 : e.code === 1013 ? 503 : 502;
      const named = /^\d{3} ([a-z_]+)$/.exec(e.reason)?.[1];
      const code: ErrorCode = named && (ERROR_CODES as readonly string[]).includes(named) ? (named as ErrorCode) : 'upstream_error';
      refuse(new ApiError(status, code, `agent '${agentId}' refused the stream: ${e.reason || e.code}`));
    });
    try {
      await opening;
    } catch (err) {
      settled = true;
      clearTimeout(timer);
      throw err;
    }
    if (settled && !accepted) trunk.closeStream(id);
  }

  private closeAgentStreams(tenantId: string, agentId: string): void {
    for (const s of [...this.agentStreams]) if (s.tenantId === tenantId && s.agentId === agentId) s.close(1011, 'agent offline');
  }

  private openFleetStream(tenantId: string, ws: WebSocket): void {
    const entry = { tenantId, ws };
    this.fleetSockets.add(entry);
    ws.on('close', () => this.fleetSockets.delete(entry));
    ws.on('error', () => this.fleetSockets.delete(entry));
    ws.send(JSON.stringify({ type: 'hello', tenant_id: tenantId, node: this.node, agents: this.presence.list(tenantId) }));
    for (const e of this.presence.events(tenantId)) ws.send(JSON.stringify({ ...e, replay: true }));
  }

  private sendTenant(tenantId: string, frame: unknown): void {
    let text: string | null = null;
    for (const s of this.fleetSockets) {
      if (s.tenantId !== tenantId || s.ws.readyState !== s.ws.OPEN) continue;
      // A consumer that cannot keep up loses frames rather than growing the relay's memory.
      if (s.ws.bufferedAmount > 8 * 1024 * 1024) continue;
      text ??= JSON.stringify(frame);
      s.ws.send(text);
    }
  }

  private broadcastMember(e: FleetMemberEvent): void {
    this.sendTenant(e.tenant_id, e);
  }

  private broadcastEvent(tenantId: string, agentId: string, frame: Record<string, unknown>): void {
    this.sendTenant(tenantId, { type: 'event', ...frame, agent_id: agentId, tenant_id: tenantId });
  }

  async close(): Promise<void> {
    for (const s of this.fleetSockets) s.ws.terminate();
    for (const ws of this.streamWss.clients) ws.terminate();
    for (const ws of this.wss.clients) ws.terminate();
    await this.trunk?.close();
    await this.broker?.close();
    if (this.server) {
      this.server.closeAllConnections?.();
      await new Promise<void>((r) => this.server!.close(() => r()));
    }
    await this.enrollments.close();
    await this.apiKeys.flush();
  }
}

/** A close code the relay may send its client for the agent's `code` (1005/1006 and others are not sendable). */
function closeCode(code: number): number {
  return code === 1000 || code === 1001 || (code >= 1007 && code <= 1014) || (code >= 3000 && code <= 4999) ? code : 1011;
}

/** At most 123 bytes (the WebSocket limit), whatever the agent sent. */
function closeReason(reason: string): string {
  let r = reason.slice(0, 123);
  while (Buffer.byteLength(r) > 123) r = r.slice(0, -1);
  return r;
}

function decodeBody(res: RelayResponse): unknown {
  if (!res.body_b64) return null;
  const text = Buffer.from(res.body_b64, 'base64').toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
