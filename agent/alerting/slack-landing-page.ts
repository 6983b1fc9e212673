import { escapeHtml, landingPageHeaders, scriptSafeJson } from '../security/oidc/landing-page.js';

/** Where the page lives on the agent; the default redirect URI points here. */
export const SLACK_CALLBACK_PAGE_PATH = '/admin/oauth/slack/callback';

/** `type` of the message posted to the opener window. */
export const SLACK_MESSAGE_TYPE = 'svc-slack-oauth';

/**
 * Fixed script text (values travel in a JSON data block), pinned by its hash in the CSP. The message
 * goes to the opener only when it is this agent's own origin: the code must not reach another site.
 */
const SCRIPT = `(function () {
  var data = JSON.parse(document.getElementById('svc-slack-data').textContent || '{}');
  if (data.code && window.opener && !window.opener.closed) {
    try {
      window.opener.postMessage({ type: '${SLACK_MESSAGE_TYPE}', code: data.code, state: data.state }, window.location.origin);
      document.getElementById('svc-slack-status').textContent = 'Slack authorization handed back to the Control Center. You can close this window.';
      window.close();
    } catch (e) { /* the manual values below stay visible */ }
  }
})();`;
const HEADERS = landingPageHeaders(SCRIPT);

/**
 * `GET /admin/oauth/slack/callback` (docs/operations.md § Alerting, Slack): where Slack sends the
 * browser back. It posts `{type:"svc-slack-oauth", code, state}` to the opener (same origin) and
 * closes, or shows code and state for `POST /v1/admin/slack/oauth/callback`; it shows Slack's `error`,
 * and says so when no code came. Every value is escaped.
 */
export function renderSlackLandingPage(p: { code: string; state: string; error: string }): string {
  const body = p.error
    ? `<p>Slack refused the authorization: <code>${escapeHtml(p.error)}</code></p>`
    : p.code
      ? `<p>Paste these values into the Control Center (POST /v1/admin/slack/oauth/callback):</p>
<dl>
<dt>code</dt><dd><code id="svc-slack-code">${escapeHtml(p.code)}</code></dd>
<dt>state</dt><dd><code id="svc-slack-state">${escapeHtml(p.state)}</code></dd>
</dl>`
      : '<p>No authorization code was received from Slack.</p>';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Control Center Slack setup</title>
<style>body{font-family:system-ui,sans-serif;margin:2rem;max-width:48rem}code{word-break:break-all;background:#f3f3f3;padding:0 .2rem}</style>
</head>
<body>
<h1>Control Center Slack setup</h1>
<p id="svc-slack-status"></p>
${body}
<script type="application/json" id="svc-slack-data">${scriptSafeJson({ code: p.error ? '' : p.code, state: p.state })}</script>
<script>${SCRIPT}</script>
</body>
</html>
`;
}

export function slackLandingPageResponse(requestUrl: string): Response {
  const q = new URL(requestUrl).searchParams;
  const html = renderSlackLandingPage({ code: q.get('code') ?? '', state: q.get('state') ?? '', error: q.get('error') ?? '' });
  return new Response(html, { status: 200, headers: HEADERS });
}
