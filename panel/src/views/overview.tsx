import type { Session } from '../api.js';
import { formatTime, useLoad } from '../use-load.js';

interface Pool {
  total: number;
  healthy: number;
  degraded: number;
  offline: number;
  unknown: number;
  failed: number;
}
interface Instance {
  project_name: string | null;
  fleet_id: string | null;
  overall_status: string;
  svc_version: string;
  control_center_ui_version: string;
  tenant_id: string;
  config_loaded: boolean;
  program_path: string | null;
  uptime_ms: number;
  device_pool: Pool;
}
interface Dashboard {
  device_pool: Pool;
  fleet_agent_count: number;
  alert_count: number;
}
export interface Alert {
  id: string;
  alert_type: string;
  severity: string;
  message: string;
  source: string;
  timestamp_ms: number;
}

/** Instance, readiness at a glance and the latest alerts. */
export function Overview({ session }: { session: Session }) {
  const c = session.client;
  const instance = useLoad(() => c.getInstance() as Promise<Instance>, 10_000);
  const dashboard = useLoad(() => c.getDashboard() as Promise<Dashboard>, 10_000);
  const alerts = useLoad(async () => ((await c.listAlerts()) as { alerts: Alert[] }).alerts, 10_000);
  const i = instance.data;
  const pool = dashboard.data?.device_pool ?? i?.device_pool;
  return (
    <section class="view" data-view="overview">
      <h2>Overview</h2>
      {instance.error && <p class="error">{instance.error}</p>}
      {i && (
        <div class="cards">
          <div class="card">
            <h3>Instance</h3>
            <dl>
              <dt>Project</dt>
              <dd data-testid="project-name">{i.project_name ?? '—'}</dd>
              <dt>Fleet</dt>
              <dd>{i.fleet_id ?? '—'}</dd>
              <dt>Program</dt>
              <dd>{i.program_path ?? '—'}</dd>
              <dt>Tenant</dt>
              <dd>{i.tenant_id}</dd>
              <dt>Versions</dt>
              <dd>
                agent {i.svc_version} · panel {i.control_center_ui_version}
              </dd>
              <dt>Uptime</dt>
              <dd>{Math.round(i.uptime_ms / 1000)} s</dd>
            </dl>
          </div>
          <div class="card">
            <h3>Readiness</h3>
            <p class={`status status-${i.overall_status}`} data-testid="overall-status">
              {i.overall_status}
            </p>
            {pool && (
              <dl>
                <dt>Devices</dt>
                <dd>{pool.total}</dd>
                <dt>Healthy / degraded</dt>
                <dd>
                  {pool.healthy} / {pool.degraded}
                </dd>
                <dt>Offline / failed</dt>
                <dd>
                  {pool.offline} / {pool.failed}
                </dd>
                <dt>Unknown</dt>
                <dd>{pool.unknown}</dd>
              </dl>
            )}
            {dashboard.data && (
              <p class="muted">
                {dashboard.data.fleet_agent_count} fleet agents · {dashboard.data.alert_count} alerts
              </p>
            )}
          </div>
        </div>
      )}
      <div class="card">
        <h3>Recent alerts</h3>
        {alerts.error && <p class="error">{alerts.error}</p>}
        {alerts.data && alerts.data.length === 0 && <p class="muted">No alerts.</p>}
        <ul class="alerts">
          {(alerts.data ?? [])
            .slice(-5)
            .reverse()
            .map((a) => (
              <li key={a.id}>
                <span class={`sev sev-${a.severity}`}>{a.severity}</span> {a.message} <span class="muted">{formatTime(a.timestamp_ms)}</span>
              </li>
            ))}
        </ul>
      </div>
    </section>
  );
}
