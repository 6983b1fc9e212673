import { useState } from 'preact/hooks';
import { can, describeError, type Session } from '../api.js';
import { formatTime, useLoad } from '../use-load.js';
import type { ConfigApprovalRequest as Approval, SnapshotMeta } from '../../../api/domains/config-control.js';

/** Shapes of docs/operations.md § Configuration snapshots and approvals, and § Drift. */
interface HistoryEntry {
  id: string;
  timestamp: number;
  action: string;
  snapshot_id?: string;
  actor?: string;
}

interface Finding {
  dimension: string;
  severity: string;
  message: string;
  path: string | null;
}

interface DriftReport {
  passed: boolean;
  findings: Finding[];
  by_dimension: Record<string, number>;
  dimensions_checked: string[];
}

interface DriftScan {
  id: string;
  scanned_at_ms: number;
  baseline_id: string;
  passed: boolean;
  finding_count: number;
  by_dimension: Record<string, number>;
  triggered_alert: boolean;
  alert_deduplicated: boolean;
  source: string;
}

const SEVERITY_ORDER = ['critical', 'high', 'medium', 'low', 'info'];

const short = (v: unknown) => {
  const t = JSON.stringify(v) ?? 'undefined';
  return t.length > 80 ? `${t.slice(0, 77)}…` : t;
};
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const idOf = (v: unknown) => (isRecord(v) && typeof v['id'] === 'string' ? v['id'] : null);

/** Leaf differences between two JSON values; arrays of objects with an `id` compare by id. */
function diffValues(path: string, a: unknown, b: unknown, out: string[]): void {
  if (out.length >= 60 || JSON.stringify(a) === JSON.stringify(b)) return;
  if (Array.isArray(a) && Array.isArray(b) && [...a, ...b].every((x) => idOf(x) !== null)) {
    const before = new Map(a.map((x) => [idOf(x)!, x]));
    const after = new Map(b.map((x) => [idOf(x)!, x]));
    for (const id of before.keys()) if (!after.has(id)) out.push(`- ${path}[${id}]`);
    for (const [id, x] of after) if (!before.has(id)) out.push(`+ ${path}[${id}]: ${short(x)}`);
    for (const [id, x] of before) if (after.has(id)) diffValues(`${path}[${id}]`, x, after.get(id), out);
    return;
  }
  if (isRecord(a) && isRecord(b)) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      if (!(k in b)) out.push(`- ${path}.${k}: ${short(a[k])}`);
      else if (!(k in a)) out.push(`+ ${path}.${k}: ${short(b[k])}`);
      else diffValues(`${path}.${k}`, a[k], b[k], out);
    }
    return;
  }
  out.push(`~ ${path}: ${short(a)} → ${short(b)}`);
}

/**
 * A long change message `~ key: <old JSON> -> <new JSON>` (a whole table or array changed) as the
 * leaf differences, for reading only: the agent's message stays the reference and is shown beside
 * (docs/operations.md § Drift says not to rely on the message format, so anything that does not
 * read cleanly falls back to the message as it is).
 */
function changeLines(message: string): string[] | null {
  const m = /^~ ([^:]+): ([\s\S]*)$/.exec(message);
  if (!m) return null;
  const rest = m[2]!;
  for (let i = rest.indexOf(' -> '); i >= 0; i = rest.indexOf(' -> ', i + 1)) {
    try {
      const out: string[] = [];
      diffValues(m[1]!, JSON.parse(rest.slice(0, i)), JSON.parse(rest.slice(i + 4)), out);
      return out.length ? out : null;
    } catch {
      /* not this arrow: a value's text contained one */
    }
  }
  return null;
}

function Change({ message }: { message: string }) {
  const lines = message.length > 160 ? changeLines(message) : null;
  if (!lines) return <>{message}</>;
  return (
    <>
      <ul class="diff" data-testid="diff">
        {lines.map((l, i) => (
          <li key={i} class={`diff-${l[0] === '+' ? 'add' : l[0] === '-' ? 'del' : 'chg'}`}>
            {l}
          </li>
        ))}
      </ul>
      <details>
        <summary class="muted small">the agent's message ({message.length} characters)</summary>
        {message}
      </details>
    </>
  );
}

/**
 * A drift report read by a person: the verdict, counts per dimension, then each finding with its
 * severity, dimension and path. The change messages (`~ a.b: old -> new`, `+ a.b`, `- a.b`) are
 * the agent's own; they are shown as they are (docs/operations.md § Drift: "do not parse them").
 */
function DriftReportView({ report, title }: { report: DriftReport; title: string }) {
  const findings = [...report.findings].sort((a, b) => SEVERITY_ORDER.indexOf(a.severity) - SEVERITY_ORDER.indexOf(b.severity));
  const dims = Object.entries(report.by_dimension);
  return (
    <div class="drift-report" data-testid="drift-report" data-passed={String(report.passed)}>
      <p>
        <strong>{title}:</strong>{' '}
        <span class={`pill pill-${report.passed ? 'passed' : 'halted'}`}>{report.passed ? 'no significant drift' : 'drift'}</span>{' '}
        <span class="muted">
          {report.findings.length} finding{report.findings.length === 1 ? '' : 's'}
          {dims.length ? ` (${dims.map(([d, n]) => `${d} ${n}`).join(', ')})` : ''}; checked {report.dimensions_checked.join(', ')}
        </span>
      </p>
      {findings.length > 0 && (
        <table data-testid="findings">
          <thead>
            <tr>
              <th>Severity</th>
              <th>Dimension</th>
              <th>Change</th>
              <th>Path</th>
            </tr>
          </thead>
          <tbody>
            {findings.map((f, i) => (
              <tr key={i}>
                <td>
                  <span class={`sev sev-${f.severity}`}>{f.severity}</span>
                </td>
                <td>{f.dimension}</td>
                <td class="wrap mono">
                  <Change message={f.message} />
                </td>
                <td class="mono">{f.path ?? '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

/** Votes against the quorum, as a count and a small bar. */
function Votes({ a }: { a: Approval }) {
  const got = a.approvals.length;
  const need = Math.max(1, a.required_approvals);
  return (
    <span class="votes" data-testid="votes" title={a.approvals.map((v) => `${v.approver} at ${formatTime(v.approved_at_ms)}`).join('\n')}>
      {got}/{a.required_approvals}
      <span class="progress mini">
        <span class="bar-ok" style={{ width: `${Math.min(1, got / need) * 100}%` }} />
      </span>
      {a.approvals.length > 0 && <span class="muted small"> {a.approvals.map((v) => v.approver).join(', ')}</span>}
    </span>
  );
}

/**
 * Configuration (docs/panel.md § Views; docs/operations.md): snapshots (save: Deploy), approvals
 * (submit: Deploy; approve/reject: Approve) with votes against the quorum, the history, and drift
 * against a snapshot (a check anyone signed in may run; a recorded scan: Operate).
 */
export function Configuration({ session }: { session: Session }) {
  const c = session.client;
  const snapshots = useLoad(async () => ((await c.listConfigSnapshots()) as { snapshots: SnapshotMeta[] }).snapshots, 10_000);
  const approvals = useLoad(async () => ((await c.listConfigApprovals()) as { approvals: Approval[] }).approvals, 5_000);
  const history = useLoad(async () => ((await c.getConfigHistory()) as { history: HistoryEntry[] }).history, 10_000);
  const scans = useLoad(async () => ((await c.listDriftScans()) as { scans: DriftScan[] }).scans, 10_000);
  const deploy = can(session, 'Deploy');
  const approve = can(session, 'Approve');
  const operate = can(session, 'Operate');

  const [label, setLabel] = useState('');
  const [encrypt, setEncrypt] = useState(false);
  const [requestFor, setRequestFor] = useState<string | null>(null);
  const [required, setRequired] = useState('1');
  const [note, setNote] = useState('');
  const [baseline, setBaseline] = useState('');
  const [report, setReport] = useState<{ title: string; report: DriftReport } | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  const reloadAll = () => {
    snapshots.reload();
    approvals.reload();
    history.reload();
    scans.reload();
  };
  const act = async (fn: () => Promise<string | void>) => {
    setError(null);
    setMessage(null);
    try {
      const m = await fn();
      if (m) setMessage(m);
    } catch (err) {
      setError(describeError(err));
    }
    reloadAll();
  };

  const save = () =>
    act(async () => {
      const r = (await c.saveConfigSnapshot({ ...(label.trim() ? { label: label.trim() } : {}), ...(encrypt ? { encrypt: true } : {}) })) as { snapshot: SnapshotMeta };
      setLabel('');
      return `Saved snapshot ${r.snapshot.id}${r.snapshot.encrypted ? ' (encrypted)' : ''}.`;
    });
  const submit = (snapshotId: string) =>
    act(async () => {
      const n = Number(required);
      const r = (await c.submitConfigApproval({ snapshot_id: snapshotId, ...(note.trim() ? { note: note.trim() } : {}), ...(Number.isInteger(n) && n >= 1 ? { required_approvals: n } : {}) })) as { approval: Approval };
      setRequestFor(null);
      setNote('');
      return `Approval ${r.approval.id} requested for ${snapshotId}.`;
    });
  const vote = (id: string, kind: 'approve' | 'reject') =>
    act(async () => {
      const r = (await (kind === 'approve' ? c.approveConfigApproval(id, {}) : c.rejectConfigApproval(id, {}))) as {
        quorum: { required: number; received: number; met: boolean };
        publish: { snapshot_id: string; devices_persisted: string[] | number; devices_failed: string[] | number; reloaded_from_disk: boolean } | null;
      };
      if (kind === 'reject') return `Rejected ${id}.`;
      const p = r.publish;
      const count = (v: string[] | number) => (Array.isArray(v) ? v.length : v);
      return p
        ? `Quorum met (${r.quorum.received}/${r.quorum.required}): published ${p.snapshot_id}, ${count(p.devices_persisted)} device(s) written, ${count(p.devices_failed)} failed${p.reloaded_from_disk ? ', configuration reloaded from disk' : ''}.`
        : `Vote recorded: ${r.quorum.received}/${r.quorum.required}.`;
    });
  const check = () =>
    act(async () => {
      const id = baseline || snapshots.data?.[0]?.id;
      if (!id) throw new Error('Save a snapshot first: drift is measured against one.');
      const r = (await c.detectDrift({ baseline_id: id })) as { report: DriftReport };
      setReport({ title: `Drift from ${id} (not recorded)`, report: r.report });
    });
  const scan = () =>
    act(async () => {
      const r = (await c.runDriftScan(baseline ? { baseline_id: baseline } : {})) as { scan: DriftScan; report: DriftReport };
      setReport({ title: `Scan ${r.scan.id} against ${r.scan.baseline_id}`, report: r.report });
      return r.scan.triggered_alert ? `Scan ${r.scan.id} recorded; it raised a config_drift alert${r.scan.alert_deduplicated ? ' (deduplicated)' : ''}.` : `Scan ${r.scan.id} recorded.`;
    });

  const snapshotName = (id: string) => {
    const s = snapshots.data?.find((x) => x.id === id);
    return s?.label ? `${s.label} (${id})` : id;
  };

  return (
    <section class="view" data-view="configuration">
      <h2>Configuration</h2>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {message && <p data-testid="config-message">{message}</p>}

      <div class="card">
        <h3>Snapshots</h3>
        {deploy && (
          <div class="actions form-row" data-testid="save-snapshot">
            <input name="snapshot-label" placeholder="Label (optional)" value={label} onInput={(e) => setLabel(e.currentTarget.value)} />
            <label class="check" title="AES-256-GCM; the agent needs SVC_CONFIG_SNAPSHOT_KEY">
              <input name="snapshot-encrypt" type="checkbox" checked={encrypt} onChange={(e) => setEncrypt(e.currentTarget.checked)} /> Encrypt
            </label>
            <button onClick={save}>Save snapshot</button>
          </div>
        )}
        {snapshots.error && <p class="error">{snapshots.error}</p>}
        {snapshots.data && snapshots.data.length === 0 && <p class="muted">No snapshots yet.</p>}
        {snapshots.data && snapshots.data.length > 0 && (
          <table data-testid="snapshots">
            <thead>
              <tr>
                <th>Id</th>
                <th>Label</th>
                <th>Saved</th>
                <th>Project</th>
                <th>Devices</th>
                <th>Encrypted</th>
                {deploy && <th />}
              </tr>
            </thead>
            <tbody>
              {snapshots.data.map((s) => (
                <tr key={s.id} data-snapshot={s.id}>
                  <td class="mono">{s.id}</td>
                  <td>{s.label ?? '—'}</td>
                  <td>{formatTime(s.created_at_ms)}</td>
                  <td>{s.project_name}</td>
                  <td>{s.device_count}</td>
                  <td>{s.encrypted ? 'yes' : 'no'}</td>
                  {deploy && (
                    <td class="actions">
                      <button class="secondary" onClick={() => setRequestFor(requestFor === s.id ? null : s.id)}>
                        Request approval…
                      </button>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        )}
        {deploy && requestFor && (
          <div class="confirm" data-testid="request-approval">
            <p>
              Request approval to publish <strong>{snapshotName(requestFor)}</strong>: the vote that meets the quorum writes its devices back into the project and the device pool.
            </p>
            <div class="actions form-row">
              <label>
                Approvals required <input name="required-approvals" type="number" min={1} value={required} onInput={(e) => setRequired(e.currentTarget.value)} />
              </label>
              <input name="approval-note" placeholder="Note (optional)" value={note} onInput={(e) => setNote(e.currentTarget.value)} />
              <button onClick={() => submit(requestFor)}>Submit for approval</button>
              <button class="secondary" onClick={() => setRequestFor(null)}>
                Cancel
              </button>
            </div>
          </div>
        )}
      </div>

      <div class="card">
        <h3>Approvals</h3>
        {approvals.error && <p class="error">{approvals.error}</p>}
        {approvals.data && approvals.data.length === 0 && <p class="muted">No approval requests.</p>}
        {approvals.data && approvals.data.length > 0 && (
          <table data-testid="approvals">
            <thead>
              <tr>
                <th>Id</th>
                <th>Snapshot</th>
                <th>Requested by</th>
                <th>Status</th>
                <th>Votes / quorum</th>
                <th>Note</th>
                <th>Opened</th>
                {approve && <th />}
              </tr>
            </thead>
            <tbody>
              {[...approvals.data].reverse().map((a) => (
                <tr key={a.id} data-approval={a.id}>
                  <td class="mono">{a.id}</td>
                  <td class="mono">{a.snapshot_id}</td>
                  <td>{a.requester}</td>
                  <td>
                    <span class={`pill pill-${a.status}`} data-testid="approval-status">
                      {a.status}
                    </span>
                    {a.resolver && <span class="muted small"> by {a.resolver}</span>}
                  </td>
                  <td>
                    <Votes a={a} />
                  </td>
                  <td class="wrap">{a.note ?? ''}</td>
                  <td>{formatTime(a.created_at_ms)}</td>
                  {approve && (
                    <td class="actions">
                      {a.status === 'pending' && <button onClick={() => vote(a.id, 'approve')}>Approve</button>}
                      {a.status === 'pending' && (
                        <button class="danger" onClick={() => vote(a.id, 'reject')}>
                          Reject
                        </button>
                      )}
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </div>

      <div class="card" data-testid="drift">
        <h3>Drift</h3>
        <div class="actions form-row">
          <label>
            Baseline{' '}
            <select name="drift-baseline" value={baseline} onChange={(e) => setBaseline(e.currentTarget.value)}>
              <option value="">newest snapshot</option>
              {(snapshots.data ?? []).map((s) => (
                <option key={s.id} value={s.id}>
                  {s.label ? `${s.label} · ` : ''}
                  {s.id}
                </option>
              ))}
            </select>
          </label>
          <button class="secondary" onClick={check}>
            Check drift
          </button>
          {operate && <button onClick={scan}>Run scan</button>}
        </div>
        {report && <DriftReportView title={report.title} report={report.report} />}
        <h3 class="sub">Recorded scans</h3>
        {scans.error && <p class="error">{scans.error}</p>}
        {scans.data && scans.data.length === 0 && <p class="muted">No scans recorded.</p>}
        {scans.data && scans.data.length > 0 && (
          <table data-testid="scans">
            <thead>
              <tr>
                <th>Scan</th>
                <th>When</th>
                <th>Baseline</th>
                <th>Result</th>
                <th>Findings</th>
                <th>By dimension</th>
                <th>Alert</th>
                <th>Source</th>
              </tr>
            </thead>
            <tbody>
              {[...scans.data].reverse().map((s) => (
                <tr key={s.id} data-scan={s.id}>
                  <td class="mono">{s.id}</td>
                  <td>{formatTime(s.scanned_at_ms)}</td>
                  <td class="mono">{s.baseline_id}</td>
                  <td>
                    <span class={`pill pill-${s.passed ? 'passed' : 'halted'}`}>{s.passed ? 'passed' : 'drift'}</span>
                  </td>
                  <td>{s.finding_count}</td>
                  <td>{Object.entries(s.by_dimension).map(([d, n]) => `${d} ${n}`).join(', ') || '—'}</td>
                  <td>{s.triggered_alert ? (s.alert_deduplicated ? 'raised (deduplicated)' : 'raised') : '—'}</td>
                  <td>{s.source}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </div>

      <div class="card">
        <h3>History</h3>
        {history.error && <p class="error">{history.error}</p>}
        {history.data && history.data.length === 0 && <p class="muted">No configuration changes yet.</p>}
        {history.data && history.data.length > 0 && (
          <table data-testid="config-history">
            <thead>
              <tr>
                <th>When</th>
                <th>What</th>
                <th>Snapshot</th>
                <th>By</th>
              </tr>
            </thead>
            <tbody>
              {history.data.slice(0, 50).map((h) => (
                <tr key={h.id}>
                  <td>{formatTime(h.timestamp)}</td>
                  <td>{h.action}</td>
                  <td class="mono">{h.snapshot_id ?? '—'}</td>
                  <td>{h.actor ?? '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </div>
      {!deploy && !approve && <p class="muted small">Saving snapshots and requesting approvals need Deploy, votes need Approve, a recorded drift scan needs Operate; the {session.role} role can read{operate ? ' and run drift scans' : ''}.</p>}
    </section>
  );
}
