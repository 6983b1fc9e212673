import crypto from 'node:crypto';

/** `type` of the message posted to the opener window. */
export const OIDC_MESSAGE_TYPE = 'svc-oidc-oauth';

/** Text for an HTML text node or a double-quoted attribute. */
export function escapeHtml(value: string): string {
  return value
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** JSON that is safe inside a `<script>` element: no `<`, `>`, `&` or line separators survive. */
export function scriptSafeJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/**
 * The page script is fixed text (the values travel in a JSON data block), so its hash can pin it in
 * the Content-Security-Policy: nothing else on the page can run.
 */
const SCRIPT = `(function () {
  var data = JSON.parse(document.getElementById('svc-oidc-data').textContent || '{}');
  if (window.opener && !window.opener.closed && (data.code || data.error)) {
    var message = { type: '${OIDC_MESSAGE_TYPE}', code: data.code, state: data.state };
    if (data.iss) message.iss = data.iss;
    if (data.error) message.error = data.error;
    window.opener.postMessage(message, '*');
    document.getElementById('svc-oidc-status').textContent = 'Sign-in handed back to the Control Center. You can close this window.';
    window.close();
  }
})();`;
/**
 * Headers of a sign-in landing page (this one and the Slack one, agent/alerting): no caching, no
 * Referer (the code is in the page's URL), and a CSP that lets only the page's own fixed script run,
 * pinned by its hash.
 */
export function landingPageHeaders(script: string): Readonly<Record<string, string>> {
  const hash = crypto.createHash('sha256').update(script).digest('base64');
  return {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
    'content-security-policy': `default-src 'none'; script-src 'sha256-${hash}'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
  };
}

export const LANDING_PAGE_HEADERS = landingPageHeaders(SCRIPT);

export interface LandingPageParams {
  code: string;
  state: string;
  iss: string;
  error: string;
  error_description: string;
}

/**
 * `GET /admin/oauth/oidc/callback` (docs/security-oidc.md §3 step 2): where the identity provider sends the
 * browser back. With an opener window (the UI's sign-in popup) it posts
 * `{type:"svc-oidc-oauth", code, state}` to it; otherwise it shows code and state for pasting into
 * `POST /v1/auth/oidc/callback`. Every value is escaped; the page holds no secret (the code is useless
 * without the PKCE verifier, which never leaves the agent).
 */
export function renderLandingPage(p: LandingPageParams): string {
  const data = scriptSafeJson({ code: p.code, state: p.state, iss: p.iss, error: p.error });
  const body = p.error
    ? `<p>The identity provider refused the sign-in: <code>${escapeHtml(p.error)}</code>${
        p.error_description ? ` — ${escapeHtml(p.error_description)}` : ''
      }</p>`
    : p.code
      ? `<p>Paste these values into the Control Center sign-in (POST /v1/auth/oidc/callback):</p>
<dl>
<dt>code</dt><dd><code id="svc-oidc-code">${escapeHtml(p.code)}</code></dd>
<dt>state</dt><dd><code id="svc-oidc-state">${escapeHtml(p.state)}</code></dd>
</dl>`
      : '<p>No authorization code was received.</p>';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Control Center sign-in</title>
<style>body{font-family:system-ui,sans-serif;margin:2rem;max-width:48rem}code{word-break:break-all;background:#f3f3f3;padding:0 .2rem}</style>
</head>
<body>
<h1>Control Center sign-in</h1>
<p id="svc-oidc-status"></p>
${body}
<script type="application/json" id="svc-oidc-data">${data}</script>
<script>${SCRIPT}</script>
</body>
</html>
`;
}

/** The landing page response for a request URL (query `code`, `state`, `iss`, `error`, `error_description`). */
export function landingPageResponse(requestUrl: string): Response {
  const q = new URL(requestUrl).searchParams;
  const get = (name: string) => q.get(name) ?? '';
  const html = renderLandingPage({
    code: get('code'),
    state: get('state'),
    iss: get('iss'),
    error: get('error'),
    error_description: get('error_description'),
  });
  return new Response(html, { status: 200, headers: LANDING_PAGE_HEADERS });
}
