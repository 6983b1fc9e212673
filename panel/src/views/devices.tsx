import { useState } from 'preact/hooks';
import { can, type Session } from '../api.js';
import { DeviceCommand, FirmwareUpdate } from '../components/device-controls.js';
import { formatClock, useLoad } from '../use-load.js';
import { TelemetryPlot } from '../telemetry-plot.js';

interface Device {
  id: string;
  device_type: string;
  lifecycle_state: string;
  health_status: string;
  assigned_robot: string | null;
  last_seen_ms: number | null;
  protocol: string | null;
  transport: string | null;
  firmware_version: string | null;
  source: string;
}

/**
 * The device table; selecting a row opens its detail with the live telemetry plot, a command form
 * (Operate) and a firmware update with the device's progress (Deploy). Controls a role cannot use are
 * not shown (docs/panel.md § Roles).
 */
export function Devices({ session }: { session: Session }) {
  const c = session.client;
  const devices = useLoad(async () => ((await c.listDevices()) as { devices: Device[] }).devices, 5_000);
  const [selected, setSelected] = useState<string | null>(null);
  const device = devices.data?.find((d) => d.id === selected) ?? null;
  const operate = can(session, 'Operate');
  const deploy = can(session, 'Deploy');
  return (
    <section class="view" data-view="devices">
      <h2>Devices</h2>
      {devices.error && <p class="error">{devices.error}</p>}
      <div class="split">
        <div class="card">
          {devices.data && devices.data.length === 0 && <p class="muted">No devices.</p>}
          {devices.data && devices.data.length > 0 && (
            <table data-testid="devices">
              <thead>
                <tr>
                  <th>Id</th>
                  <th>Type</th>
                  <th>Robot</th>
                  <th>Lifecycle</th>
                  <th>Health</th>
                  <th>Last seen</th>
                </tr>
              </thead>
              <tbody>
                {devices.data.map((d) => (
                  <tr key={d.id} data-device={d.id} class={d.id === selected ? 'selected' : ''} onClick={() => setSelected(d.id)}>
                    <td>
                      <button class="link">{d.id}</button>
                    </td>
                    <td>{d.device_type}</td>
                    <td>{d.assigned_robot ?? '—'}</td>
                    <td>{d.lifecycle_state}</td>
                    <td>
                      <span class={`status status-${d.health_status}`}>{d.health_status}</span>
                    </td>
                    <td title={d.last_seen_ms ? new Date(d.last_seen_ms).toISOString() : undefined}>{formatClock(d.last_seen_ms)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </div>
        {device && (
          <div class="card detail" data-testid="device-detail">
            <h3>{device.id}</h3>
            <dl>
              <dt>Type</dt>
              <dd>{device.device_type}</dd>
              <dt>Protocol</dt>
              <dd>{device.protocol ?? '—'}</dd>
              <dt>Transport</dt>
              <dd>{device.transport ?? '—'}</dd>
              <dt>Firmware</dt>
              <dd data-testid="device-firmware">{device.firmware_version ?? '—'}</dd>
              <dt>Source</dt>
              <dd>{device.source}</dd>
            </dl>
            <TelemetryPlot key={device.id} client={c} deviceId={device.id} />
            {(operate || deploy) && (
              <div class="device-controls">
                {operate && <DeviceCommand key={`cmd-${device.id}`} client={c} deviceId={device.id} />}
                {deploy && <FirmwareUpdate key={`fw-${device.id}`} client={c} deviceId={device.id} onDone={devices.reload} />}
              </div>
            )}
          </div>
        )}
      </div>
    </section>
  );
}
