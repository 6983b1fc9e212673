import { useState } from 'preact/hooks';
import { ROLES } from '../../../api/roles.js';
import { describeError, type Session } from '../api.js';
import { formatTime, useLoad } from '../use-load.js';

/**
 * Administration (docs/panel.md § Admin; docs/security.md §2-3, docs/security-oidc.md §2): API keys,
 * the operator directory and the OIDC settings. Listed in the navigation for administrators only;
 * the agent refuses every `/v1/admin` call of anyone else (403) and any role the caller could not
 * grant ("No escalation"), so the role lists below are the contract's (`api/roles.ts`), not a copy.
 */

interface ApiKey {
  key_id: string;
  role: string;
  label: string;
  tenant_id: string;
}

interface User {
  user_id: string;
  display_name: string;
  email: string | null;
  role: string;
  api_key_id: string | null;
  enabled: boolean;
  source: string;
  updated_at_ms: number;
}

interface OidcSettings {
  enabled: boolean;
  issuer: string;
  client_id: string;
  client_secret_set: boolean;
  group_role_map: Record<string, string>;
  redirect_uri: string;
  oauth_ready: boolean;
  last_sync_at: string | number | null;
}

export function Admin({ session }: { session: Session }) {
  return (
    <section class="view" data-view="admin">
      <h2>Administration</h2>
      <ApiKeys session={session} />
      <Users session={session} />
      <Oidc session={session} />
    </section>
  );
}

function RoleSelect({ value, onChange, name }: { value: string; onChange: (role: string) => void; name: string }) {
  return (
    <select name={name} value={value} onChange={(e) => onChange(e.currentTarget.value)}>
      {ROLES.map((r) => (
        <option key={r} value={r}>
          {r}
        </option>
      ))}
    </select>
  );
}

/** Runs an admin call, shows its failure, reloads the list. */
function useAction(reload: () => void): [string | null, (fn: () => Promise<unknown>) => Promise<boolean>] {
  const [error, setError] = useState<string | null>(null);
  const run = async (fn: () => Promise<unknown>) => {
    setError(null);
    try {
      await fn();
      return true;
    } catch (err) {
      setError(describeError(err));
      return false;
    } finally {
      reload();
    }
  };
  return [error, run];
}

function ApiKeys({ session }: { session: Session }) {
  const c = session.client;
  const keys = useLoad(async () => ((await c.listAdminApiKeys()) as { keys: ApiKey[] }).keys);
  const [error, run] = useAction(keys.reload);
  const [role, setRole] = useState<string>('operator');
  const [label, setLabel] = useState('');
  // The token of the key just created: shown once, dropped on the next action or when leaving the view.
  const [created, setCreated] = useState<{ key_id: string; token: string } | null>(null);
  const [editing, setEditing] = useState<{ id: string; role: string; label: string } | null>(null);

  const create = async (e: Event) => {
    e.preventDefault();
    setCreated(null);
    await run(async () => {
      const r = (await c.createAdminApiKey({ role, ...(label.trim() ? { label: label.trim() } : {}) })) as { key_id: string; token: string };
      setCreated({ key_id: r.key_id, token: r.token });
      setLabel('');
    });
  };

  return (
    <div class="card" data-testid="admin-keys">
      <h3>API keys</h3>
      {keys.error && <p class="error">{keys.error}</p>}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {created && (
        <div class="once" data-testid="new-token">
          <p>
            Key <strong>{created.key_id}</strong> created. Copy its token now: it is shown this once and cannot be
            retrieved again.
          </p>
          <input class="token" readOnly value={created.token} onFocus={(e) => e.currentTarget.select()} data-testid="new-token-value" />
          <button class="link" onClick={() => setCreated(null)}>
            Done, I copied it
          </button>
        </div>
      )}
      {keys.data && (
        <table data-testid="keys">
          <thead>
            <tr>
              <th>Key id</th>
              <th>Role</th>
              <th>Label</th>
              <th>Tenant</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {keys.data.map((k) =>
              editing?.id === k.key_id ? (
                <tr key={k.key_id} data-key={k.key_id}>
                  <td>{k.key_id}</td>
                  <td>
                    <RoleSelect name="edit-key-role" value={editing.role} onChange={(r) => setEditing({ ...editing, role: r })} />
                  </td>
                  <td>
                    <input name="edit-key-label" value={editing.label} onInput={(e) => setEditing({ ...editing, label: e.currentTarget.value })} />
                  </td>
                  <td>{k.tenant_id}</td>
                  <td class="actions">
                    <button
                      onClick={async () => {
                        setCreated(null);
                        if (await run(() => c.patchAdminApiKey(k.key_id, { role: editing.role, label: editing.label }))) setEditing(null);
                      }}
                    >
                      Save
                    </button>
                    <button class="link" onClick={() => setEditing(null)}>
                      Cancel
                    </button>
                  </td>
                </tr>
              ) : (
                <tr key={k.key_id} data-key={k.key_id}>
                  <td>
                    {k.key_id}
                    {k.key_id === session.keyId && <span class="muted"> (you)</span>}
                  </td>
                  <td data-testid="key-role">{k.role}</td>
                  <td data-testid="key-label">{k.label}</td>
                  <td>{k.tenant_id}</td>
                  <td class="actions">
                    <button class="secondary" onClick={() => setEditing({ id: k.key_id, role: k.role, label: k.label })}>
                      Edit
                    </button>
                    <button
                      class="danger"
                      onClick={() => {
                        // Revoking is immediate and final: every client holding the token loses access.
                        const own = k.key_id === session.keyId ? ' This is the key you are signed in with: this panel loses access too.' : '';
                        if (window.confirm(`Revoke key ${k.key_id}? Every client using it loses access at once.${own}`)) {
                          setCreated(null);
                          void run(() => c.deleteAdminApiKey(k.key_id));
                        }
                      }}
                    >
                      Revoke
                    </button>
                  </td>
                </tr>
              ),
            )}
          </tbody>
        </table>
      )}
      <form class="inline" onSubmit={create} data-testid="create-key">
        <label>
          Role <RoleSelect name="new-key-role" value={role} onChange={setRole} />
        </label>
        <label>
          Label <input name="new-key-label" value={label} maxLength={200} onInput={(e) => setLabel(e.currentTarget.value)} />
        </label>
        <button type="submit">Create key</button>
      </form>
    </div>
  );
}

function Users({ session }: { session: Session }) {
  const c = session.client;
  const users = useLoad(async () => ((await c.listAdminUsers()) as { users: User[] }).users);
  const [error, run] = useAction(users.reload);
  const blank = { user_id: '', display_name: '', email: '', role: 'operator' };
  const [form, setForm] = useState(blank);

  const create = async (e: Event) => {
    e.preventDefault();
    const ok = await run(() =>
      c.createAdminUser({
        user_id: form.user_id.trim(),
        display_name: form.display_name.trim(),
        role: form.role,
        email: form.email.trim() || null,
      }),
    );
    if (ok) setForm(blank);
  };

  return (
    <div class="card" data-testid="admin-users">
      <h3>Users</h3>
      {users.error && <p class="error">{users.error}</p>}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {users.data && users.data.length === 0 && <p class="muted">No users in the directory.</p>}
      {users.data && users.data.length > 0 && (
        <table data-testid="users">
          <thead>
            <tr>
              <th>User id</th>
              <th>Name</th>
              <th>Email</th>
              <th>Role</th>
              <th>Enabled</th>
              <th>Source</th>
              <th>Updated</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {users.data.map((u) => (
              <tr key={u.user_id} data-user={u.user_id}>
                <td>{u.user_id}</td>
                <td>{u.display_name}</td>
                <td>{u.email ?? '—'}</td>
                <td>
                  <RoleSelect name="user-role" value={u.role} onChange={(r) => void run(() => c.patchAdminUser(u.user_id, { role: r }))} />
                </td>
                <td>
                  <input
                    type="checkbox"
                    name="user-enabled"
                    checked={u.enabled}
                    onChange={(e) => void run(() => c.patchAdminUser(u.user_id, { enabled: e.currentTarget.checked }))}
                  />
                </td>
                <td>{u.source}</td>
                <td>{formatTime(u.updated_at_ms)}</td>
                <td class="actions">
                  <button
                    class="danger"
                    onClick={() => {
                      if (window.confirm(`Remove ${u.user_id} from the directory? Their sessions end at the next request.`)) void run(() => c.deleteAdminUser(u.user_id));
                    }}
                  >
                    Remove
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <form class="inline" onSubmit={create} data-testid="create-user">
        <label>
          User id <input name="new-user-id" required maxLength={200} value={form.user_id} onInput={(e) => setForm({ ...form, user_id: e.currentTarget.value })} />
        </label>
        <label>
          Name <input name="new-user-name" required maxLength={200} value={form.display_name} onInput={(e) => setForm({ ...form, display_name: e.currentTarget.value })} />
        </label>
        <label>
          Email <input name="new-user-email" type="email" maxLength={320} value={form.email} onInput={(e) => setForm({ ...form, email: e.currentTarget.value })} />
        </label>
        <label>
          Role <RoleSelect name="new-user-role" value={form.role} onChange={(r) => setForm({ ...form, role: r })} />
        </label>
        <button type="submit">Add user</button>
      </form>
    </div>
  );
}

/** `group: role` lines, one per group (the map's text form in the form). */
function mapToText(m: Record<string, string>): string {
  return Object.entries(m)
    .map(([g, r]) => `${g}: ${r}`)
    .join('\n');
}

function textToMap(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const i = line.lastIndexOf(':');
    if (i <= 0) continue;
    const group = line.slice(0, i).trim();
    const role = line.slice(i + 1).trim();
    if (group && role) out[group] = role;
  }
  return out;
}

function Oidc({ session }: { session: Session }) {
  const c = session.client;
  const [draft, setDraft] = useState<{ enabled: boolean; issuer: string; client_id: string; redirect_uri: string; map: string } | null>(null);
  // The secret is write-only (docs/security-oidc.md §2): this field starts empty, is sent only when
  // typed into, and is cleared after saving; the agent shows `client_secret_set`, never a value.
  const [secret, setSecret] = useState('');
  const [saved, setSaved] = useState(false);
  const settings = useLoad(async () => {
    const s = (await c.getAdminOidc()) as OidcSettings;
    setDraft({ enabled: s.enabled, issuer: s.issuer, client_id: s.client_id, redirect_uri: s.redirect_uri ?? '', map: mapToText(s.group_role_map) });
    return s;
  });
  const [error, run] = useAction(settings.reload);

  const save = async (e: Event) => {
    e.preventDefault();
    if (!draft) return;
    setSaved(false);
    const ok = await run(() =>
      c.putAdminOidc({
        enabled: draft.enabled,
        issuer: draft.issuer.trim(),
        client_id: draft.client_id.trim(),
        group_role_map: textToMap(draft.map),
        // The shown redirect URI may be the agent's default (docs/security-oidc.md § Redirect URI
        // resolution): it is stored only when changed here, so the default keeps following its source.
        ...(draft.redirect_uri.trim() && draft.redirect_uri.trim() !== (settings.data?.redirect_uri ?? '') ? { redirect_uri: draft.redirect_uri.trim() } : {}),
        ...(secret ? { client_secret: secret } : {}),
      }),
    );
    if (ok) {
      setSecret('');
      setSaved(true);
    }
  };

  const s = settings.data;
  return (
    <div class="card" data-testid="admin-oidc">
      <h3>OIDC sign-in</h3>
      {settings.error && <p class="error">{settings.error}</p>}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {s && (
        <p class="muted">
          Client secret: <strong data-testid="secret-set">{s.client_secret_set ? 'set' : 'not set'}</strong> · ready:{' '}
          {s.oauth_ready ? 'yes' : 'no'} · login offered: {s.enabled && s.oauth_ready ? 'yes' : 'no'}
          {s.last_sync_at ? ` · last import ${typeof s.last_sync_at === 'number' ? formatTime(s.last_sync_at) : s.last_sync_at}` : ''}
          {saved && <span data-testid="oidc-saved"> · saved</span>}
        </p>
      )}
      {draft && (
        <form class="stack" onSubmit={save} data-testid="oidc-form">
          <label class="check">
            <input type="checkbox" name="oidc-enabled" checked={draft.enabled} onChange={(e) => setDraft({ ...draft, enabled: e.currentTarget.checked })} /> Offer
            OIDC sign-in
          </label>
          <label>
            Issuer <input name="oidc-issuer" value={draft.issuer} placeholder="https://id.example.com/realms/robots" onInput={(e) => setDraft({ ...draft, issuer: e.currentTarget.value })} />
          </label>
          <label>
            Client id <input name="oidc-client-id" value={draft.client_id} onInput={(e) => setDraft({ ...draft, client_id: e.currentTarget.value })} />
          </label>
          <label>
            Client secret
            <input
              type="password"
              name="oidc-client-secret"
              autocomplete="off"
              value={secret}
              placeholder={s?.client_secret_set ? 'set — leave empty to keep it' : 'not set'}
              onInput={(e) => setSecret(e.currentTarget.value)}
            />
          </label>
          <label>
            Redirect URI{' '}
            <input name="oidc-redirect-uri" value={draft.redirect_uri} placeholder="https://<agent>/admin/oauth/oidc/callback" onInput={(e) => setDraft({ ...draft, redirect_uri: e.currentTarget.value })} />
          </label>
          <label>
            Group → role, one “group: role” per line
            <span class="muted small">roles: {ROLES.join(', ')}; the first of a person's groups found here gives the role</span>
            <textarea name="oidc-group-map" rows={4} value={draft.map} onInput={(e) => setDraft({ ...draft, map: e.currentTarget.value })} />
          </label>
          <div>
            <button type="submit">Save OIDC settings</button>
          </div>
        </form>
      )}
    </div>
  );
}
