import { useState } from 'preact/hooks';
import { can, describeError, type Session } from '../api.js';
import { formatTime, useLoad } from '../use-load.js';
import type { Alert } from './overview.js';

interface Incident {
  id: string;
  title: string;
  severity?: string;
  status: string;
  assignee?: string | null;
  source_alert_id?: string | null;
  created_at_ms: number;
}

/** Alerts (newest first) and incidents; acknowledge and resolve need the Operate permission. */
export function Alerts({ session }: { session: Session }) {
  const c = session.client;
  const alerts = useLoad(async () => ((await c.listAlerts()) as { alerts: Alert[] }).alerts, 5_000);
  const incidents = useLoad(async () => ((await c.listSreIncidents()) as { incidents: Incident[] }).incidents, 5_000);
  const [actionError, setActionError] = useState<string | null>(null);
  const operate = can(session, 'Operate');

  const act = async (fn: () => Promise<unknown>) => {
    setActionError(null);
    try {
      await fn();
    } catch (err) {
      setActionError(describeError(err));
    }
    incidents.reload();
  };

  return (
    <section class="view" data-view="alerts">
      <h2>Alerts &amp; incidents</h2>
      <div class="card">
        <h3>Incidents</h3>
        {incidents.error && <p class="error">{incidents.error}</p>}
        {actionError && <p class="error" role="alert">{actionError}</p>}
        {incidents.data && incidents.data.length === 0 && <p class="muted">No incidents.</p>}
        {incidents.data && incidents.data.length > 0 && (
          <table data-testid="incidents">
            <thead>
              <tr>
                <th>Title</th>
                <th>Severity</th>
                <th>Status</th>
                <th>Assignee</th>
                <th>Opened</th>
                {operate && <th />}
              </tr>
            </thead>
            <tbody>
              {incidents.data.map((i) => (
                <tr key={i.id} data-incident={i.id}>
                  <td>{i.title}</td>
                  <td>{i.severity ?? '—'}</td>
                  <td data-testid="incident-status">{i.status}</td>
                  <td>{i.assignee ?? '—'}</td>
                  <td>{formatTime(i.created_at_ms)}</td>
                  {operate && (
                    <td class="actions">
                      {i.status === 'open' && (
                        <button onClick={() => act(() => c.ackSreIncident(i.id, { assignee: session.keyId ?? undefined }))}>Acknowledge</button>
                      )}
                      {i.status !== 'resolved' && <button onClick={() => act(() => c.resolveSreIncident(i.id, {}))}>Resolve</button>}
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </div>
      <div class="card">
        <h3>Alerts</h3>
        {alerts.error && <p class="error">{alerts.error}</p>}
        {alerts.data && alerts.data.length === 0 && <p class="muted">No alerts.</p>}
        {alerts.data && alerts.data.length > 0 && (
          <table data-testid="alerts">
            <thead>
              <tr>
                <th>Time</th>
                <th>Severity</th>
                <th>Type</th>
                <th>Message</th>
                <th>Source</th>
              </tr>
            </thead>
            <tbody>
              {[...alerts.data].reverse().map((a) => (
                <tr key={a.id}>
                  <td>{formatTime(a.timestamp_ms)}</td>
                  <td>
                    <span class={`sev sev-${a.severity}`}>{a.severity}</span>
                  </td>
                  <td>{a.alert_type}</td>
                  <td>{a.message}</td>
                  <td>{a.source}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </div>
    </section>
  );
}
