import { baseUrl, signIn, SvcClient, type Session } from '../api.js';

/**
 * OIDC sign-in through the agent's landing page (docs/security-oidc.md §3, docs/panel.md § OIDC sign-in):
 * authorize-url → the provider in a popup → the provider sends the popup to the agent's
 * `GET /admin/oauth/oidc/callback`, which posts `{type:"svc-oidc-oauth", code, state, iss?}` to this
 * window → `POST /v1/auth/oidc/callback` → the agent's own session token, used as the Bearer credential.
 */
export const OIDC_MESSAGE_TYPE = 'svc-oidc-oauth';

interface AuthorizeStart {
  authorize_url: string;
  state: string;
  redirect_uri: string;
}

interface LandingMessage {
  type: string;
  code?: string;
  state?: string;
  iss?: string;
  error?: string;
}

/** A name for the button: the issuer's host (`id.example.com`), or the issuer as given. */
export function providerName(issuer: string | null | undefined): string {
  if (!issuer) return 'your identity provider';
  try {
    return new URL(issuer).host;
  } catch {
    return issuer;
  }
}

/**
 * Runs the whole flow. Must be called from a click: the popup is opened at once (before any await)
 * so the browser counts it as the user's own action and does not block it.
 */
export async function signInWithOidc(): Promise<Session> {
  const popup = window.open('about:blank', 'svc-oidc-signin', 'popup,width=520,height=700');
  if (!popup) throw new Error('The browser blocked the sign-in window: allow pop-ups for this page and try again.');
  const client = new SvcClient({ baseUrl: baseUrl() });
  let start: AuthorizeStart;
  try {
    start = (await client.createOidcAuthorizeUrl({})) as AuthorizeStart;
  } catch (err) {
    popup.close();
    throw err;
  }
  // Only the landing page the agent sends the provider back to may answer: its origin is the redirect
  // URI's, its window our popup, and its state the one this sign-in started with.
  const landingOrigin = new URL(start.redirect_uri).origin;
  popup.location.href = start.authorize_url;
  const message = await new Promise<LandingMessage>((resolve, reject) => {
    let closedSince = 0;
    const onMessage = (e: MessageEvent) => {
      if (e.source !== popup || e.origin !== landingOrigin) return;
      const d = e.data as LandingMessage | null;
      if (!d || typeof d !== 'object' || d.type !== OIDC_MESSAGE_TYPE || d.state !== start.state) return;
      done();
      resolve(d);
    };
    // The landing page closes the popup right after posting; give its message a moment to arrive.
    const poll = window.setInterval(() => {
      if (!popup.closed) return;
      if (closedSince === 0) closedSince = Date.now();
      else if (Date.now() - closedSince > 1500) {
        done();
        reject(new Error('The sign-in window was closed before the sign-in finished.'));
      }
    }, 250);
    const done = () => {
      window.clearInterval(poll);
      window.removeEventListener('message', onMessage);
    };
    window.addEventListener('message', onMessage);
  });
  if (!popup.closed) popup.close();
  if (message.error) throw new Error(`The identity provider refused the sign-in: ${message.error}`);
  const session = (await client.completeOidcSignIn({ code: message.code, state: message.state, ...(message.iss ? { iss: message.iss } : {}) })) as { session_token: string };
  return signIn(session.session_token, 'session');
}

/** Seconds until a session token expires (its `exp` claim; the agent verifies the token, this only schedules the refresh). */
export function secondsLeft(token: string): number | null {
  try {
    const payload = JSON.parse(atob(token.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/'))) as { exp?: number };
    return typeof payload.exp === 'number' ? payload.exp - Date.now() / 1000 : null;
  } catch {
    return null;
  }
}

/** A new session token for the signed-in one (`POST /v1/auth/session/refresh`), as a new Session. */
export async function refreshOidcSession(session: Session): Promise<Session> {
  const r = (await session.client.refreshSession({ token: session.client.apiKey })) as { session_token: string };
  return signIn(r.session_token, 'session');
}
