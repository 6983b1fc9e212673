import { useEffect, useState } from 'preact/hooks';
import { describeError, forgetKey, servedBy, signIn, signInRelay, storedKey, storedKind, SvcClient, baseUrl, throughRelay, type Session } from './api.js';
import { providerName, refreshOidcSession, secondsLeft, signInWithOidc } from './components/oidc-signin.js';
import { viewsFor } from './views/index.js';

type Served = 'agent' | 'relay';

function hashView(): string {
  return window.location.hash.replace(/^#\/?/, '');
}

export function App() {
  const [session, setSession] = useState<Session | null>(null);
  const [served] = useState<Served>(servedBy);
  const [restoring, setRestoring] = useState(() => storedKey() !== null);
  const [view, setView] = useState<string>(hashView);

  useEffect(() => {
    const onHash = () => setView(hashView());
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);

  // A credential kept by this tab signs in again; what served the page decides how it is checked
  // (docs/panel.md § Served by a relay).
  useEffect(() => {
    const key = storedKey();
    if (key === null) return;
    (served === 'relay' ? signInRelay(key) : signIn(key, storedKind()))
      .then(setSession)
      .catch(() => forgetKey())
      .finally(() => setRestoring(false));
  }, []);

  // An OIDC session token is short-lived: it is exchanged for a new one a minute before it expires.
  useEffect(() => {
    if (!session || session.kind !== 'session') return;
    const left = secondsLeft(session.client.apiKey ?? '');
    if (left === null) return;
    const t = window.setTimeout(
      () => {
        refreshOidcSession(session).then(setSession, () => {
          forgetKey();
          setSession(null);
        });
      },
      Math.max(5, left - 60) * 1000,
    );
    return () => window.clearTimeout(t);
  }, [session]);

  if (restoring) return <p class="muted pad">Connecting…</p>;
  if (!session) return <SignIn served={served} onSession={setSession} />;

  const views = viewsFor(session);
  const current = views.find((v) => v.id === view) ?? views[0]!;
  return (
    <div class="shell">
      <header class="top">
        <span class="brand">svc control center{served === 'relay' ? ' · relay' : ''}</span>
        <nav>
          {views.map((v) => (
            <a key={v.id} href={`#/${v.id}`} class={v.id === current.id ? 'active' : ''} data-view={v.id}>
              {v.label}
            </a>
          ))}
        </nav>
        <span class="who" data-testid="who">
          {session.relayTenant !== undefined ? (
            <>
              relay key · tenant <strong>{session.relayTenant}</strong>
            </>
          ) : (
            <>
              {session.userId ?? session.keyId ?? 'signed in'} · <strong>{session.role}</strong>
              {session.kind === 'session' && <span class="muted"> (OIDC)</span>}
            </>
          )}
          <button
            class="link"
            onClick={() => {
              forgetKey();
              setSession(null);
            }}
          >
            Sign out
          </button>
        </span>
      </header>
      <main key={current.id}>{current.render(session)}</main>
    </div>
  );
}

function SignIn({ served, onSession }: { served: Served; onSession: (s: Session) => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  // OIDC login is the agent's (GET /v1/auth/config); a relay has none.
  const [oidc, setOidc] = useState<{ issuer: string | null } | null>(null);
  useEffect(() => {
    // Offline (the cached shell) there is no agent to ask; through a relay only relay keys work.
    if (served !== 'agent' || throughRelay() || !navigator.onLine) return;
    new SvcClient({ baseUrl: baseUrl() })
      .getAuthConfig()
      .then((cfg: { oidc_login_enabled?: boolean; issuer?: string | null }) => setOidc(cfg.oidc_login_enabled ? { issuer: cfg.issuer ?? null } : null))
      .catch(() => setOidc(null));
  }, [served]);

  const attempt = async (fn: () => Promise<Session>) => {
    setBusy(true);
    setError(null);
    try {
      onSession(await fn());
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };
  const submit = (e: Event) => {
    e.preventDefault();
    void attempt(() => (served === 'relay' ? signInRelay(key.trim()) : signIn(key.trim())));
  };
  return (
    <form class="signin card" onSubmit={submit}>
      <h1>svc control center</h1>
      {served === 'relay' && <p class="muted">Fleet relay: sign in with a key of this relay.</p>}
      {throughRelay() && <p class="muted">This agent is reached through a relay: sign in with a key of the relay.</p>}
      <label>
        API key
        <input type="password" name="api-key" autocomplete="off" value={key} onInput={(e) => setKey(e.currentTarget.value)} required />
      </label>
      <button type="submit" disabled={busy || key.trim() === ''}>
        Sign in
      </button>
      {oidc && (
        <button type="button" class="secondary" data-testid="oidc-signin" disabled={busy} onClick={() => void attempt(signInWithOidc)}>
          Sign in with {providerName(oidc.issuer)}
        </button>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <p class="muted">The credential stays in this tab (session storage) and is sent only to {served === 'relay' || throughRelay() ? 'this relay' : 'this agent'}.</p>
    </form>
  );
}
