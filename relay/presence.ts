import type { AgentPresence } from '../api/relay-protocol.js';

/** One fleet membership change (`FleetMemberJoined` / `FleetMemberLeft`), kept in a small ring. */
export interface FleetMemberEvent {
  type: 'FleetMemberJoined' | 'FleetMemberLeft';
  tenant_id: string;
  agent_id: string;
  agent_version: string;
  ts_ms: number;
}

/** What `GET /v1/fleet/agents` returns per agent: presence only, never a credential. */
export interface FleetAgentView {
  agent_id: string;
  tenant_id: string;
  online: boolean;
  last_seen_ms: number;
  agent_version: string;
  connected_since_ms: number | null;
}

/**
 * The fleet as the broker's retained presence messages describe it. Rebuilt from the broker after
 * every start or reconnect (the broker re-sends retained status on subscribe), so a relay node keeps
 * nothing of its own.
 */
export class PresenceView {
  private readonly agents = new Map<string, FleetAgentView>();
  private beforeReset = new Map<string, FleetAgentView>();
  private readonly ring: FleetMemberEvent[] = [];
  private readonly listeners: Array<(e: FleetMemberEvent) => void> = [];

  constructor(
    private readonly ringSize = 256,
    private readonly log: (line: string) => void = () => undefined,
  ) {}

  private static key(tenantId: string, agentId: string): string {
    return `${tenantId}\u0000${agentId}`;
  }

  onMember(listener: (e: FleetMemberEvent) => void): void {
    this.listeners.push(listener);
  }

  update(tenantId: string, agentId: string, p: AgentPresence | null): void {
    const key = PresenceView.key(tenantId, agentId);
    const before = this.agents.get(key) ?? this.beforeReset.get(key);
    this.beforeReset.delete(key);
    if (p === null) {
      this.agents.delete(key);
      if (before?.online) this.record('FleetMemberLeft', before);
      return;
    }
    const view: FleetAgentView = {
      agent_id: agentId,
      tenant_id: tenantId,
      online: p.online,
      last_seen_ms: Number(p.last_seen_ms) || Date.now(),
      agent_version: String(p.agent_version ?? ''),
      connected_since_ms: p.online ? (Number(p.connected_since_ms) || null) : null,
    };
    this.agents.set(key, view);
    if (view.online && !before?.online) this.record('FleetMemberJoined', view);
    if (!view.online && before?.online) this.record('FleetMemberLeft', view);
  }

  private record(type: FleetMemberEvent['type'], v: FleetAgentView): void {
    const e: FleetMemberEvent = { type, tenant_id: v.tenant_id, agent_id: v.agent_id, agent_version: v.agent_version, ts_ms: Date.now() };
    this.ring.push(e);
    if (this.ring.length > this.ringSize) this.ring.shift();
    this.log(`${type} tenant=${v.tenant_id} agent=${v.agent_id} version=${v.agent_version || '?'}`);
    for (const l of this.listeners) l(e);
  }

  /** Forgets every agent (the trunk reconnected; retained presence follows). No membership events. */
  reset(): void {
    // Kept only to tell a re-sent presence from a join: a reconnect does not re-announce the fleet.
    this.beforeReset = new Map(this.agents);
    this.agents.clear();
  }

  get(tenantId: string, agentId: string): FleetAgentView | null {
    return this.agents.get(PresenceView.key(tenantId, agentId)) ?? null;
  }

  list(tenantId: string): FleetAgentView[] {
    return [...this.agents.values()].filter((a) => a.tenant_id === tenantId).sort((a, b) => a.agent_id.localeCompare(b.agent_id));
  }

  /** Membership events of one tenant, oldest first. */
  events(tenantId: string): FleetMemberEvent[] {
    return this.ring.filter((e) => e.tenant_id === tenantId);
  }

  get size(): number {
    return this.agents.size;
  }
}
