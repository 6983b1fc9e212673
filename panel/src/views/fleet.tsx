import { baseUrl, type Session } from '../api.js';
import { formatTime, useLoad } from '../use-load.js';

/** One agent as the relay's `GET /v1/fleet/agents` reports it (docs/relay.md § Routes). */
interface FleetAgent {
  agent_id: string;
  tenant_id: string;
  online: boolean;
  last_seen_ms: number | null;
  agent_version: string | null;
  connected_since_ms: number | null;
}

/**
 * The relay's fleet (docs/panel.md § Served by a relay): the agents of the signed-in key's tenant with their
 * presence, refreshed every 5 s, and a link to each agent's own panel through the relay
 * (`/agents/<id>/`, where the relay forwards the page, its files, the API and the stream).
 * The relay's routes are not agent operations, so this calls them with `client.request`.
 */
export function Fleet({ session }: { session: Session }) {
  const fleet = useLoad(async () => ((await session.client.request('GET', '/v1/fleet/agents')) as { agents: FleetAgent[] }).agents, 5_000);
  const agents = fleet.data ? [...fleet.data].sort((a, b) => a.agent_id.localeCompare(b.agent_id)) : null;
  const online = agents?.filter((a) => a.online).length ?? 0;
  return (
    <section class="view" data-view="fleet">
      <h2>Fleet</h2>
      <div class="card">
        <h3>
          Agents of tenant {session.relayTenant}
          {agents && (
            <span class="muted" data-testid="fleet-count">
              {' '}
              · {online} of {agents.length} online
            </span>
          )}
        </h3>
        {fleet.error && <p class="error">{fleet.error}</p>}
        {agents && agents.length === 0 && <p class="muted">No agent has connected to this relay yet (docs/relay.md § Enrollment).</p>}
        {agents && agents.length > 0 && (
          <table data-testid="fleet">
            <thead>
              <tr>
                <th>Agent</th>
                <th>State</th>
                <th>Version</th>
                <th>Connected since</th>
                <th>Last seen</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {agents.map((a) => (
                <tr key={a.agent_id} data-agent={a.agent_id}>
                  <td>{a.agent_id}</td>
                  <td>
                    <span class={`status status-${a.online ? 'healthy' : 'offline'}`} data-testid="agent-state">
                      {a.online ? 'online' : 'offline'}
                    </span>
                  </td>
                  <td>{a.agent_version ?? '—'}</td>
                  <td>{formatTime(a.connected_since_ms)}</td>
                  <td>{formatTime(a.last_seen_ms)}</td>
                  <td>
                    {a.online ? (
                      <a href={`${baseUrl()}/agents/${encodeURIComponent(a.agent_id)}/`} data-testid="open-agent">
                        Open panel
                      </a>
                    ) : (
                      <span class="muted">offline</span>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </div>
    </section>
  );
}
