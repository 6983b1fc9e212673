import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { type OidcProviderContext } from 'oidc-provider';

/** One person the test identity provider knows; devInteractions accepts any login name. */
export interface TestAccount {
  name?: string;
  email?: string;
  groups?: string[];
}

/** What the provider saw at its token endpoint, for the PKCE (docs/wire-decisions.md D7) and token-refusal assertions. */
export interface TokenGrantRecord {
  client_id: string | undefined;
  code_verifier: string | undefined;
  access_token: string | undefined;
  id_token: string | undefined;
}

export interface TestOidcProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  grants: TokenGrantRecord[];
  /** Token-endpoint failures (e.g. a wrong PKCE verifier), as oidc-provider reports them. */
  grantErrors: string[];
  close(): Promise<void>;
}

/**
 * A real OpenID provider (`oidc-provider` v9) on an ephemeral loopback port, issuer
 * `http://127.0.0.1:<port>`. One confidential client (`client_secret_post`, as the agent
 * authenticates), authorization code only, PKCE required, a `groups` claim in the `profile` scope,
 * and the built-in development login/consent forms (devInteractions).
 */
export async function startOidcProvider(options: { redirectUri: string; accounts?: Record<string, TestAccount> }): Promise<TestOidcProvider> {
  const accounts = options.accounts ?? {};
  const clientId = 'svc-agent';
  const clientSecret = crypto.randomBytes(24).toString('hex');
  // The HTTP server is bound first: the issuer must carry the port, and the provider is built with it.
  let handler: http.RequestListener = (_req, res) => {
    res.statusCode = 503;
    res.end();
  };
  const server = http.createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const signingKey = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [options.redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    // Confidential clients need not use PKCE by default; this provider insists, as docs/wire-decisions.md D7 requires us to send it.
    pkce: { required: () => true },
    claims: {
      openid: ['sub'],
      profile: ['name', 'preferred_username', 'groups'],
      email: ['email', 'email_verified'],
    },
    findAccount: (_ctx: unknown, id: string) => ({
      accountId: id,
      claims: () => {
        const a = accounts[id] ?? {};
        return {
          sub: id,
          name: a.name ?? id,
          preferred_username: id,
          email: a.email ?? `${id}@example.test`,
          email_verified: true,
          groups: a.groups ?? [],
        };
      },
    }),
    features: { devInteractions: { enabled: true } },
    // Explicit lifetimes (seconds), which also keeps the provider from printing a notice per default.
    ttl: { AccessToken: 600, AuthorizationCode: 120, IdToken: 600, Interaction: 600, Session: 3600, Grant: 3600 },
    jwks: { keys: [{ ...signingKey, kid: 'test-signing-key', alg: 'RS256', use: 'sig' }] },
    cookies: { keys: [crypto.randomBytes(16).toString('hex')] },
    // Keep the test output clean of the provider's own error pages.
    renderError: (ctx: { type: string; body: unknown }, out: Record<string, unknown>) => {
      ctx.type = 'json';
      ctx.body = out;
    },
  });

  const grants: TokenGrantRecord[] = [];
  const grantErrors: string[] = [];
  provider.on('grant.success', (ctx: OidcProviderContext) => {
    const body = (ctx.body ?? {}) as Record<string, unknown>;
    grants.push({
      client_id: ctx.oidc.client?.clientId,
      code_verifier: typeof ctx.oidc.params?.['code_verifier'] === 'string' ? (ctx.oidc.params['code_verifier'] as string) : undefined,
      access_token: typeof body['access_token'] === 'string' ? body['access_token'] : undefined,
      id_token: typeof body['id_token'] === 'string' ? body['id_token'] : undefined,
    });
  });
  provider.on('grant.error', (_ctx: unknown, err: Error & { error_description?: string; error_detail?: string }) => {
    const cause = err.cause instanceof Error ? err.cause.message : undefined;
    grantErrors.push([err.message, err.error_description, err.error_detail, cause].filter(Boolean).join(': '));
  });
  // oidc-provider logs server errors through these events only; nothing to do here.
  provider.on('server_error', () => undefined);
  handler = provider.callback();

  return {
    issuer,
    clientId,
    clientSecret,
    grants,
    grantErrors,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A cookie jar for one origin: enough for the provider's session and interaction cookies. */
export class CookieJar {
  private readonly cookies = new Map<string, string>();

  store(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const eq = pair!.indexOf('=');
      if (eq < 0) continue;
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const expired = attrs.some((a) => {
        const [k, v] = a.trim().split('=');
        if (k?.toLowerCase() === 'max-age') return Number(v) <= 0;
        if (k?.toLowerCase() === 'expires') return Date.parse(v ?? '') <= Date.now();
        return false;
      });
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

function decodeHtml(s: string): string {
  return s
    .replace(/&#x([0-9a-f]+);/gi, (_m, h: string) => String.fromCodePoint(parseInt(h, 16)))
    .replace(/&#(\d+);/g, (_m, d: string) => String.fromCodePoint(Number(d)))
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/** The first `<form method="post">` of a page: its action and its hidden inputs. */
export function parseForm(html: string): { action: string; fields: Record<string, string> } {
  const form = /<form\b[^>]*\baction="([^"]*)"[^>]*>([\s\S]*?)<\/form>/i.exec(html);
  if (!form) throw new Error(`no form in page: ${html.slice(0, 400)}`);
  const fields: Record<string, string> = {};
  for (const input of form[2]!.matchAll(/<input\b[^>]*>/gi)) {
    const tag = input[0];
    const name = /\bname="([^"]*)"/i.exec(tag)?.[1];
    const value = /\bvalue="([^"]*)"/i.exec(tag)?.[1];
    if (name && /\btype="hidden"/i.test(tag)) fields[name] = decodeHtml(value ?? '');
  }
  return { action: decodeHtml(form[1]!), fields };
}

/**
 * Plays the browser against the provider: follows redirects by hand (keeping cookies), fills the
 * devInteractions login form with `login`, confirms the consent form, and stops at the first
 * redirect that leaves the provider (to the relying party's redirect URI). Returns that URL.
 */
export async function signInAtProvider(authorizeUrl: string, login: string, issuer: string): Promise<URL> {
  const jar = new CookieJar();
  const origin = new URL(issuer).origin;
  let next: { url: string; method: 'GET' | 'POST'; form?: Record<string, string> } = { url: authorizeUrl, method: 'GET' };
  for (let hop = 0; hop < 20; hop++) {
    const url = new URL(next.url, issuer);
    if (url.origin !== origin) return url;
    const headers: Record<string, string> = { cookie: jar.header() };
    let body: string | undefined;
    if (next.method === 'POST') {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(next.form).toString();
    }
    const res = await fetch(url, { method: next.method, headers, body, redirect: 'manual' });
    jar.store(res);
    if (res.status >= 300 && res.status < 400) {
      const location = res.headers.get('location');
      if (!location) throw new Error(`redirect without location from ${url.href}`);
      await res.arrayBuffer();
      next = { url: new URL(location, url).href, method: 'GET' };
      continue;
    }
    const html = await res.text();
    if (res.status !== 200) throw new Error(`provider answered ${res.status} at ${url.pathname}: ${html.slice(0, 400)}`);
    const form = parseForm(html);
    const fields = { ...form.fields };
    if (fields['prompt'] === 'login') Object.assign(fields, { login, password: 'any-password' });
    else if (fields['prompt'] !== 'consent') throw new Error(`unexpected interaction page: ${html.slice(0, 400)}`);
    next = { url: new URL(form.action, url).href, method: 'POST', form: fields };
  }
  throw new Error('too many hops at the provider');
}
