import { useMemo, useState } from 'preact/hooks';
import { can, describeError, type Session } from '../api.js';
import { formatTime, useLoad } from '../use-load.js';
import type { AuditRecord as ChainRecord } from '../../../api/domains/audit.js';

interface AuditAnswer {
  audit: { records: ChainRecord[] };
  persist_path: string;
  record_count: number;
  chain_valid: boolean;
  chain_break_at?: string;
  chain_break_reason?: string;
  torn_tail?: boolean;
  records_signed_by_previous_keys?: number;
}

/** The fields a person scans for, out of the payload (a JSON string; anything else is shown raw). */
interface Row {
  r: ChainRecord;
  actor: string;
  role: string;
  what: string;
  status: string;
}

function rowOf(r: ChainRecord): Row {
  let p: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(r.payload);
    if (parsed && typeof parsed === 'object') p = parsed as Record<string, unknown>;
  } catch {
    /* a payload that is not JSON is shown as it is */
  }
  const str = (k: string) => (typeof p[k] === 'string' ? (p[k] as string) : '');
  const actor = str('actor_key_id') || str('actor') || str('principal') || str('source');
  const method = str('method');
  const path = str('parity_path') || str('path');
  const rpc = str('rpc');
  const what = method || path ? `${method} ${path}${rpc ? ` (${rpc})` : ''}`.trim() : Object.keys(p).length ? JSON.stringify(p) : r.payload;
  return { r, actor, role: str('actor_role'), what, status: typeof p['status'] === 'number' ? String(p['status']) : '' };
}

const PAGE = 25;

/** Saves an export as a file in the browser (a Blob URL: nothing leaves the page). */
function download(name: string, content: string, type: string): void {
  const url = URL.createObjectURL(new Blob([content], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  window.setTimeout(() => URL.revokeObjectURL(url), 1_000);
}

/**
 * Audit (docs/panel.md § Views; docs/security.md §10): the mutation records with the chain's
 * verification up front, filters and pages over them (the route returns the whole chain; filtering
 * is done here), and the JSON Lines / CEF export. Reading needs Deploy: others get an explanation.
 */
export function Audit({ session }: { session: Session }) {
  if (!can(session, 'Deploy')) {
    return (
      <section class="view" data-view="audit">
        <h2>Audit</h2>
        <div class="card" data-testid="audit-denied">
          <p>
            The audit log (every mutation, hash-chained and signed) is read with the <strong>Deploy</strong> permission, which the {session.role} role does not have.
          </p>
          <p class="muted">Ask an administrator for a key with the developer, supervisor or administrator role, or for the exported log (docs/security.md §10, "Reading and exporting").</p>
        </div>
      </section>
    );
  }
  return <AuditRecords session={session} />;
}

function AuditRecords({ session }: { session: Session }) {
  const c = session.client;
  const audit = useLoad(async () => (await c.listAuditMutations()) as AuditAnswer, 15_000);
  const [type, setType] = useState('');
  const [text, setText] = useState('');
  const [page, setPage] = useState(0);
  const [exportMsg, setExportMsg] = useState<string | null>(null);
  const [exportErr, setExportErr] = useState<string | null>(null);

  const rows = useMemo(() => (audit.data ? audit.data.audit.records.map(rowOf).reverse() : []), [audit.data]);
  const types = useMemo(() => [...new Set(rows.map((x) => x.r.event_type))].sort(), [rows]);
  const needle = text.trim().toLowerCase();
  const shown = rows.filter((x) => (!type || x.r.event_type === type) && (!needle || `${x.r.id} ${x.actor} ${x.role} ${x.what} ${x.status}`.toLowerCase().includes(needle)));
  const pages = Math.max(1, Math.ceil(shown.length / PAGE));
  const at = Math.min(page, pages - 1);
  const d = audit.data;

  const doExport = async (format: 'jsonl' | 'cef') => {
    setExportErr(null);
    setExportMsg(null);
    try {
      const r = (await c.exportAuditMutations({ format })) as { format: string; record_count: number; content: string };
      download(`audit-${new Date().toISOString().replace(/[:.]/g, '-')}.${format === 'cef' ? 'cef' : 'jsonl'}`, r.content, format === 'cef' ? 'text/plain' : 'application/x-ndjson');
      setExportMsg(`Exported ${r.record_count} records as ${r.format.toUpperCase()}.`);
    } catch (err) {
      setExportErr(describeError(err));
    }
  };

  return (
    <section class="view" data-view="audit">
      <h2>Audit</h2>
      {audit.error && <p class="error">{audit.error}</p>}
      {d && (
        <div class={`card chain ${d.chain_valid ? 'chain-ok' : 'chain-bad'}`} data-testid="chain-status" data-valid={String(d.chain_valid)}>
          <p class="chain-verdict">
            {d.chain_valid ? '✔ Hash chain verifies' : '✘ Hash chain is broken'} — {d.record_count} record{d.record_count === 1 ? '' : 's'}
          </p>
          <dl class="inline">
            {!d.chain_valid && (
              <>
                <dt>First bad record</dt>
                <dd data-testid="chain-break">{d.chain_break_at ?? '—'}</dd>
                <dt>Reason</dt>
                <dd>{d.chain_break_reason ?? '—'}</dd>
              </>
            )}
            {d.torn_tail && (
              <>
                <dt>Torn tail</dt>
                <dd>a last line cut short by a crash was set aside at start (not tampering)</dd>
              </>
            )}
            {d.records_signed_by_previous_keys ? (
              <>
                <dt>Earlier signing keys</dt>
                <dd>{d.records_signed_by_previous_keys} record(s) signed before the audit key was rotated</dd>
              </>
            ) : null}
            <dt>Last hash</dt>
            <dd class="mono">{d.audit.records.at(-1)?.hash.slice(0, 16) ?? '—'}…</dd>
            <dt>File</dt>
            <dd class="mono">{d.persist_path}</dd>
          </dl>
          <p class="muted small">Each record's hash covers its time, type, payload and the previous hash, and is signed (HMAC); the agent verifies the whole chain at start (docs/security.md §10).</p>
        </div>
      )}
      <div class="card">
        <div class="actions form-row">
          <select name="audit-type" value={type} onChange={(e) => (setType(e.currentTarget.value), setPage(0))}>
            <option value="">every event type</option>
            {types.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
          <input name="audit-search" placeholder="Filter: actor, path, id…" value={text} onInput={(e) => (setText(e.currentTarget.value), setPage(0))} />
          <button class="secondary" onClick={audit.reload}>
            Refresh
          </button>
          <span class="spacer" />
          <button class="secondary" onClick={() => doExport('jsonl')}>
            Export JSONL
          </button>
          <button class="secondary" onClick={() => doExport('cef')}>
            Export CEF
          </button>
        </div>
        {exportMsg && <p data-testid="export-message">{exportMsg}</p>}
        {exportErr && (
          <p class="error" role="alert">
            {exportErr}
          </p>
        )}
        {d && (
          <p class="muted small" data-testid="audit-count">
            {shown.length} of {rows.length} records, newest first
          </p>
        )}
        {shown.length > 0 && (
          <table data-testid="audit-records">
            <thead>
              <tr>
                <th>Id</th>
                <th>Time</th>
                <th>Event</th>
                <th>Actor</th>
                <th>What</th>
                <th>Status</th>
                <th>Hash</th>
              </tr>
            </thead>
            <tbody>
              {shown.slice(at * PAGE, at * PAGE + PAGE).map((x) => (
                <tr key={x.r.id} data-record={x.r.id}>
                  <td class="mono">{x.r.id}</td>
                  <td>{formatTime(Date.parse(x.r.timestamp))}</td>
                  <td>{x.r.event_type}</td>
                  <td>
                    {x.actor || '—'}
                    {x.role && <span class="muted small"> {x.role}</span>}
                  </td>
                  <td class="wrap mono">{x.what}</td>
                  <td>{x.status || '—'}</td>
                  <td class="mono" title={x.r.hash}>
                    {x.r.hash.slice(0, 10)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        {pages > 1 && (
          <div class="actions pager">
            <button class="secondary" disabled={at === 0} onClick={() => setPage(at - 1)}>
              ‹ Newer
            </button>
            <span data-testid="audit-page">
              page {at + 1} of {pages}
            </span>
            <button class="secondary" disabled={at >= pages - 1} onClick={() => setPage(at + 1)}>
              Older ›
            </button>
          </div>
        )}
      </div>
    </section>
  );
}
