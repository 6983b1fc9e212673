import { useEffect, useState } from 'preact/hooks';
import { describeError, forgetKey, signIn, storedKey, type Session } from './api.js';
import { VIEWS } from './views/index.js';

function viewFromHash(): string {
  const id = window.location.hash.replace(/^#\/?/, '');
  return VIEWS.find((v) => v.id === id)?.id ?? 'overview';
}

export function App() {
  const [session, setSession] = useState<Session | null>(null);
  const [restoring, setRestoring] = useState(() => storedKey() !== null);
  const [view, setView] = useState<string>(viewFromHash);

  useEffect(() => {
    const onHash = () => setView(viewFromHash());
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);

  useEffect(() => {
    const key = storedKey();
    if (key === null) return;
    signIn(key)
      .then(setSession)
      .catch(() => forgetKey())
      .finally(() => setRestoring(false));
  }, []);

  if (restoring) return <p class="muted pad">Connecting…</p>;
  if (!session) return <SignIn onSession={setSession} />;

  const current = VIEWS.find((v) => v.id === view) ?? VIEWS[0]!;
  return (
    <div class="shell">
      <header class="top">
        <span class="brand">svc control center</span>
        <nav>
          {VIEWS.map((v) => (
            <a key={v.id} href={`#/${v.id}`} class={v.id === view ? 'active' : ''} data-view={v.id}>
              {v.label}
            </a>
          ))}
        </nav>
        <span class="who" data-testid="who">
          {session.keyId ?? 'signed in'} · <strong>{session.role}</strong>
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

function SignIn({ onSession }: { onSession: (s: Session) => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      onSession(await signIn(key.trim()));
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="signin card" onSubmit={submit}>
      <h1>svc control center</h1>
      <label>
        API key
        <input type="password" name="api-key" autocomplete="off" value={key} onInput={(e) => setKey(e.currentTarget.value)} required />
      </label>
      <button type="submit" disabled={busy || key.trim() === ''}>
        Sign in
      </button>
      {error && <p class="error" role="alert">{error}</p>}
      <p class="muted">The key stays in this tab (session storage) and is sent only to this agent.</p>
    </form>
  );
}
