import { badRequest } from '../../core/errors.js';

/** Where the landing page lives on the agent (pipeline step 7 in docs/architecture.md; docs/security-oidc.md §3 step 2). */
export const OIDC_CALLBACK_PAGE_PATH = '/admin/oauth/oidc/callback';
/** Last fallback of the redirect URI resolution (body → stored → `SVC_OIDC_REDIRECT_URI` → this). */
export const DEFAULT_REDIRECT_URI = `http://127.0.0.1:8080${OIDC_CALLBACK_PAGE_PATH}`;

/** Host names (as `URL.hostname` spells them) that never leave the machine. */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** True for `http://127.0.0.1…`, `http://localhost…` and `http://[::1]…`. */
export function isLoopbackHttp(url: URL): boolean {
  return url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname.toLowerCase());
}

export const ISSUER_RULE =
  'issuer must start with https:// (plain http:// is accepted only for loopback issuers: http://127.0.0.1, http://localhost, http://[::1])';

/**
 * Checks an issuer identifier: an absolute `https://` URL without credentials, query or fragment.
 * Plain `http://` is accepted for loopback issuers only: an identity provider on the same machine
 * (air-gapped sites, tests) cannot be intercepted on the network, anything else could be.
 * Returns the issuer exactly as given (issuer identifiers are compared as strings by discovery).
 */
export function validateIssuer(value: string): string {
  const issuer = value.trim();
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw badRequest(ISSUER_RULE);
  }
  if (url.protocol !== 'https:' && !isLoopbackHttp(url)) throw badRequest(ISSUER_RULE);
  if (url.username || url.password || url.search || url.hash) {
    throw badRequest('issuer must not carry credentials, a query or a fragment');
  }
  return issuer;
}

/**
 * Checks a redirect URI and returns its normalised form (the exact string later sent both in the
 * authorization request and in the token request). The provider appends `code`, `state` and `iss`, so
 * the URI itself may carry no query and no fragment.
 */
export function validateRedirectUri(value: string): string {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw badRequest('redirect_uri must be an absolute http:// or https:// URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw badRequest('redirect_uri must be an absolute http:// or https:// URL');
  }
  if (url.username || url.password || url.search || url.hash) {
    throw badRequest('redirect_uri must not carry credentials, a query or a fragment');
  }
  return url.href;
}
