import type { IncomingMessage, ServerResponse } from 'node:http';
import type { MiddlewareHandler } from 'hono';
import { ApiError, notFound, rateLimited, unauthorized } from '../../../core/errors.js';
import { accessOf, type Access, type Operation } from '../../../core/operation.js';
import { operationMatcher } from '../operation-matcher.js';
import { checkApiVersion } from '../../../core/api-version.js';
import { invoke } from '../../../core/invoke.js';
import { TELEMETRY_STREAM_PATH } from '../../../../api/stream-paths.js';
import { publishAuthFailed } from '../../../security/access.js';
import { landingPageResponse } from '../../../security/oidc/landing-page.js';
import { SLACK_CALLBACK_PAGE_PATH, slackLandingPageResponse } from '../../../alerting/slack-landing-page.js';
import { OIDC_CALLBACK_PAGE_PATH } from '../../../security/oidc/urls.js';
import { readNeedsPrincipal } from '../../../security/read-policy.js';
import type { Services } from '../../../runtime/services.js';
import type { HttpEnv } from '../http-env.js';
import { errorResponse, isComplete, jsonResponse, JSON_TYPE, responseHeaders, toApiError } from '../responses.js';
import { authenticate } from '../../../security/authenticate.js';
import { correlationIdOf } from '../../../../api/correlation-id.js';
import { CORS_HEADERS, stampHeaders } from './cors.js';
import { isPanelPath, panelResponse } from '../panel-assets.js';

const HEALTH_PATHS = new Set(['/health', '/healthz', '/v1/health']);
const METRICS_PATH = '/metrics';
const RATE_LIMIT_EXEMPT = new Set(['/v1/health', '/v1/version', '/v1/instance']);

/**
 * The fast path's standard headers before the request's own (correlation id, length), in the order
 * the pipeline's header object puts them (`responses.ts#responseHeaders`).
 */
const FAST_HEAD: readonly string[] = ['content-type', JSON_TYPE, ...CORS_HEADERS.flat()];
/**
 * Hosts that the node adapter takes as they are (its own `reValidHost`, @hono/node-server): a request
 * with any other Host header goes the full way, so the adapter's 400 for a bad one stays the answer.
 */
const PLAIN_HOST = /^[a-z0-9._-]+(?::(?:[1-5]\d{3,4}|[6-9]\d{3}))?$/;

function isWebSocketUpgrade(req: Request): boolean {
  return (req.headers.get('upgrade') ?? '').toLowerCase() === 'websocket';
}

/**
 * The request pipeline, in its order (docs/architecture.md, "A request, step by step"). Each numbered step either answers or
 * passes on; route dispatch (14) and the handler (15) run in `next()`, tracing (16) after it.
 */
export function requestPipeline(services: Services, operations: readonly Operation[]): MiddlewareHandler<HttpEnv> {
  const log = (m: string) => process.stderr.write(`${m}\n`);
  const byId = new Map(operations.map((o) => [o.id, o]));
  const healthOp = byId.get('getHealth')!;
  const openApiOp = byId.get('getOpenApi')!;
  let openApiBody: string | null = null;
  const readPolicyOn = services.settings.requireAuthReads || services.settings.requireAuthAllReads;
  const matchOperation = operationMatcher(operations);
  const readAccessOf = (method: string, path: string): Access => {
    const op = matchOperation(method, path);
    return op ? accessOf(op) : { kind: 'sensitive-read' };
  };

  return async (c, next) => {
    const req = c.req.raw;
    const path = c.req.path;

    // 1. The telemetry stream authenticates and traces itself (never in the trace ring).
    if (path === TELEMETRY_STREAM_PATH && isWebSocketUpgrade(req)) return next();

    const startedAt = performance.now();
    const timestampMs = Date.now();
    // 2. Correlation id.
    const correlationId = correlationIdOf(req.headers.get('x-correlation-id'));
    const headers = responseHeaders(correlationId);
    c.set('correlationId', correlationId);
    c.set('responseHeaders', headers);
    c.set('principal', null);

    let response: Response;
    let routeResponse: Response | null = null;
    try {
      response = (await preDispatch()) ?? (await dispatch());
    } catch (err) {
      response = errorResponse(toApiError(err, log), headers);
    }
    // Responses made elsewhere (framework 404s, the OIDC page) get the standard headers here.
    if (!isComplete(response)) stampHeaders(response.headers, correlationId);

    // 16. Trace record.
    services.traces.append({
      correlation_id: correlationId,
      method: req.method,
      path,
      status: response.status,
      timestamp_ms: timestampMs,
      duration_ms: Math.round((performance.now() - startedAt) * 1000) / 1000,
    });
    // Hono's `c.res` setter copies headers into a fresh Response whenever one was already set; only
    // hand it a response it does not hold yet (the error path), otherwise just return ours.
    if (routeResponse !== null && response !== routeResponse) c.res = response;
    return response;

    async function dispatch(): Promise<Response> {
      await next();
      routeResponse = c.res;
      return routeResponse;
    }

    async function preDispatch(): Promise<Response | null> {
      // 0. Size limit on the declared length (streamed bodies are capped while read).
      const declared = Number(req.headers.get('content-length') ?? NaN);
      if (Number.isFinite(declared) && declared > services.settings.maxBodyBytes) {
        return errorResponse(new ApiError(413, 'payload_too_large', 'payload too large'), headers);
      }
      // 3. CORS preflight.
      if (req.method === 'OPTIONS') return new Response(null, { status: 204 });
      // 4. Health, always public, any method.
      if (HEALTH_PATHS.has(path)) {
        return jsonResponse(await invoke(healthOp, publicCall(), services), 200, headers);
      }
      // 6. OpenAPI, always public, any method; the table is fixed for the process, so build once.
      if (path === '/v1/openapi.json') {
        openApiBody ??= JSON.stringify(await invoke(openApiOp, publicCall(), services));
        return new Response(openApiBody, { status: 200, headers: { ...headers } });
      }
      // 7. Static OIDC landing page (reads code/state from its query; docs/security-oidc.md §3 step 2).
      if (req.method === 'GET' && path === OIDC_CALLBACK_PAGE_PATH) return landingPageResponse(req.url);
      // 7b. Static Slack OAuth landing page, the same kind of page (docs/operations.md § Alerting).
      if (req.method === 'GET' && path === SLACK_CALLBACK_PAGE_PATH) return slackLandingPageResponse(req.url);
      // 7c. Prometheus metrics (docs/observability.md § Prometheus): public like /v1/observability/*,
      // unless a read-auth flag is on; then a principal is needed, as for a sensitive read (device
      // counts, alert and incident load).
      if (req.method === 'GET' && path === METRICS_PATH) return metricsResponse();
      // 7d. The web panel (docs/panel.md): its page at / and /control-center, the service worker and
      // /control-center/assets/*, public like the landing pages (the shell holds no data; every call it
      // makes is a /v1 request with the signed-in key). An unknown asset is a 404.
      if ((req.method === 'GET' || req.method === 'HEAD') && isPanelPath(path)) {
        return (await panelResponse(req.method, path, headers)) ?? errorResponse(notFound(), headers);
      }
      // 8. Anything else outside /v1 is unknown.
      if (!path.startsWith('/v1/')) return errorResponse(notFound(), headers);
      // 9 + 11. Authenticate; a principal of another tenant stops here.
      const auth = await authenticate(req.headers.get('authorization'), services);
      c.set('principal', auth.principal);
      if (auth.error) return errorResponse(auth.error, headers);
      // 10. Read-auth policy for plain reads, by the operation's own access rule; a path that names no
      // operation is treated as a sensitive read (closed by default). Read-like POSTs are checked
      // with their operation.
      if ((req.method === 'GET' || req.method === 'HEAD') && !auth.principal && readPolicyOn && readNeedsPrincipal(readAccessOf(req.method, path), services.settings)) {
        publishAuthFailed(services.bus, 'read_auth_required', null, { path });
        return errorResponse(unauthorized(), headers);
      }
      // 12. API version header.
      const versionError = checkApiVersion(req.headers.get('x-svc-api-version'));
      if (versionError) return errorResponse(versionError, headers);
      // 13. Rate limit.
      if (!RATE_LIMIT_EXEMPT.has(path)) {
        const wait = services.rateLimiter.take(auth.principal?.key_id ?? 'anonymous');
        if (wait !== null) {
          return errorResponse(rateLimited(wait), headers);
        }
      }
      return null;
    }

    async function metricsResponse(): Promise<Response> {
      if (readPolicyOn) {
        const auth = await authenticate(req.headers.get('authorization'), services);
        c.set('principal', auth.principal);
        if (auth.error) return errorResponse(auth.error, headers);
        if (!auth.principal) {
          publishAuthFailed(services.bus, 'read_auth_required', null, { path });
          return errorResponse(unauthorized(), headers);
        }
      }
      const { contentType, body } = await services.metrics.render();
      return new Response(body, { status: 200, headers: { ...headers, 'content-type': contentType } });
    }

    /** Health and the OpenAPI document answer any method, before authentication: an anonymous call. */
    function publicCall() {
      return { principal: null, correlationId, transport: 'rest' as const, params: {}, query: {}, body: () => ({}) };
    }
  };
}

/**
 * Steps 0–4 and 16 of the pipeline for the hottest request, a plain `GET` of a health path, written
 * straight onto node's response (docs/architecture.md, "A request, step by step"; README.md
 * § Benchmarks: health throughput >= 70 % of bare `node:http`). The same request through Hono costs a
 * fetch `Request`, a context, the router and a `Response` per call: about half of the agent's CPU per
 * health request in a profile of `npm run bench -- --profile`. Only requests whose answer cannot differ
 * from the full pipeline's take it: method `GET`, the exact path (no query), no body (no
 * Content-Length or Transfer-Encoding: step 0 has nothing to cap), a Host the adapter accepts as is.
 * Everything else (OPTIONS, HEAD, other methods, a query, a body) goes through `requestPipeline`.
 * The answer is the same: the health operation through the invoke kernel, the standard headers (CORS,
 * correlation id, content type), and the trace record (which feeds the request metrics).
 * Returns false when the request is not one it answers.
 */
export function healthFastPath(services: Services, operations: readonly Operation[]): (req: IncomingMessage, res: ServerResponse) => boolean {
  const log = (m: string) => process.stderr.write(`${m}\n`);
  const healthOp = operations.find((o) => o.id === 'getHealth')!;
  const traces = services.traces;

  // One header list for every answer: `writeHead` turns it into the header block at once and keeps
  // no reference, so only the two per-request values change (no array per request).
  const head = [...FAST_HEAD, 'x-correlation-id', '', 'Content-Length', ''];
  const cid = head.length - 3;
  const answer = (res: ServerResponse, status: number, correlationId: string, text: string, path: string, startedAt: number, timestampMs: number): void => {
    try {
      head[cid] = correlationId;
      head[cid + 2] = String(Buffer.byteLength(text));
      res.writeHead(status, head);
      res.end(text);
      // 16. Trace record.
      traces.append({ correlation_id: correlationId, method: 'GET', path, status, timestamp_ms: timestampMs, duration_ms: Math.round((performance.now() - startedAt) * 1000) / 1000 });
    } catch (err) {
      // Nothing is left to answer with (the connection is gone or the headers went out): log it, as
      // the adapter does, rather than leave a rejected promise behind.
      log(`internal error: ${(err as Error)?.stack ?? String(err)}`);
    }
  };

  return (req, res) => {
    const path = req.url;
    if (req.method !== 'GET' || path === undefined || !HEALTH_PATHS.has(path)) return false;
    const h = req.headers;
    if (h['content-length'] !== undefined || h['transfer-encoding'] !== undefined || h.host === undefined || !PLAIN_HOST.test(h.host)) return false;

    const startedAt = performance.now();
    const timestampMs = Date.now();
    // 2. Correlation id.
    const headerValue = h['x-correlation-id'];
    const correlationId = correlationIdOf(typeof headerValue === 'string' ? headerValue : null);
    // 4. Health, through the invoke kernel like every operation (an anonymous, public call).
    invoke(healthOp, { principal: null, correlationId, transport: 'rest', params: {}, query: {}, body: () => ({}) }, services).then(
      (body) => answer(res, 200, correlationId, JSON.stringify(body), path, startedAt, timestampMs),
      (err: unknown) => {
        const apiError = toApiError(err, log);
        answer(res, apiError.status, correlationId, JSON.stringify(apiError.toEnvelope()), path, startedAt, timestampMs);
      },
    );
    return true;
  };
}
