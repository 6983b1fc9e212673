import net from 'node:net';
import { Aedes, type AuthenticateError, type Client } from 'aedes';
import { agentTopicRoot, parseAgentTopic } from '../api/relay-protocol.js';
import type { Enrollments } from './enrollments.js';
import { constantTimeEqual } from '../agent/security/constant-time.js';

/** Who an authenticated MQTT client is: an enrolled agent, or a relay node (privileged). */
export type MqttIdentity = { kind: 'agent'; tenantId: string; agentId: string; exp: number } | { kind: 'relay'; node: string };

function authError(message: string, code: 4 | 5): AuthenticateError {
  const err = new Error(message) as AuthenticateError;
  err.returnCode = code as AuthenticateError['returnCode'];
  return err;
}

/**
 * What an agent may publish below its root (api/relay-protocol.ts relayTopics): replies, presence,
 * events and stream frames. Never `req` (requests come from relay nodes only) nor any other root.
 */
export function agentMayPublish(id: { tenantId: string; agentId: string }, topic: string): boolean {
  const p = parseAgentTopic(topic);
  if (!p || p.tenantId !== id.tenantId || p.agentId !== id.agentId || topic.includes('+') || topic.includes('#')) return false;
  const [first, second, ...more] = p.rest;
  if (first === 'status' || first === 'events') return second === undefined;
  if (first === 'res' || first === 'stream') return second !== undefined && second !== '' && more.length === 0;
  return false;
}

/** An agent subscribes only below its own root; a wildcard may not stand for the tenant or agent level. */
export function agentMaySubscribe(id: { tenantId: string; agentId: string }, topic: string): boolean {
  const root = agentTopicRoot(id.tenantId, id.agentId);
  return topic === root || topic.startsWith(`${root}/`);
}

/**
 * The embedded broker (aedes) with the relay's hooks (docs/relay.md § Security model):
 * - authenticate: `relay:<node>` + the node secret of the state directory is a relay node; any other
 *   client presents an enrollment token as its password (username free, or equal to the agent id);
 *   a client id held by another identity is refused so no one can kick an agent off;
 * - authorizePublish / authorizeSubscribe: an agent stays below `svc/t/{tenant}/a/{agent}/`.
 */
export class EmbeddedBroker {
  readonly aedes: Aedes;
  private readonly identities = new Map<string, MqttIdentity>();
  private readonly clients = new Map<string, Client>();
  private server: net.Server | null = null;

  private constructor(
    aedes: Aedes,
    private readonly log: (line: string) => void,
  ) {
    this.aedes = aedes;
  }

  static async create(options: { enrollments: Enrollments; nodeSecret: string; log: (line: string) => void }): Promise<EmbeddedBroker> {
    let self: EmbeddedBroker | null = null;
    const aedes = await Aedes.createBroker({
      authenticate: (client, username, password, done) => {
        self!.authenticate(client, username, password, options).then(
          (id) => {
            self!.identities.set(client.id, id);
            self!.clients.set(client.id, client);
            done(null, true);
          },
          (err: AuthenticateError) => {
            options.log(`mqtt: refused client '${client.id}': ${err.message}`);
            done(err, false);
          },
        );
      },
      authorizePublish: (client, packet, callback) => {
        if (!client) return callback(null);
        const id = self!.identities.get(client.id);
        if (id?.kind === 'relay') return callback(null);
        if (id?.kind === 'agent' && agentMayPublish(id, packet.topic)) return callback(null);
        options.log(`mqtt: refused publish by '${client.id}' to ${packet.topic}`);
        callback(new Error('publish not authorized'));
      },
      authorizeSubscribe: (client, sub, callback) => {
        const id = self!.identities.get(client.id);
        if (id?.kind === 'relay' || (id?.kind === 'agent' && agentMaySubscribe(id, sub.topic))) return callback(null, sub);
        options.log(`mqtt: refused subscription of '${client.id}' to ${sub.topic}`);
        // MQTT 3.1.1: a refused subscription is granted as failure (0x80), the connection stays.
        callback(null, null);
      },
    });
    self = new EmbeddedBroker(aedes, options.log);
    aedes.on('clientDisconnect', (client) => {
      if (self!.clients.get(client.id) === client) {
        self!.clients.delete(client.id);
        self!.identities.delete(client.id);
      }
    });
    return self;
  }

  private async authenticate(
    client: Client,
    username: string | undefined,
    password: Buffer | undefined,
    options: { enrollments: Enrollments; nodeSecret: string },
  ): Promise<MqttIdentity> {
    const pass = password?.toString('utf8') ?? '';
    let id: MqttIdentity;
    if (username?.startsWith('relay:')) {
      if (!constantTimeEqual(pass, options.nodeSecret)) throw authError('bad relay node secret', 4);
      id = { kind: 'relay', node: username.slice('relay:'.length) };
    } else {
      const e = await options.enrollments.check(pass);
      if (!e) throw authError('enrollment token invalid, expired or revoked', 4);
      if (username && username !== e.agentId) throw authError(`username '${username}' is not the token's agent`, 5);
      id = { kind: 'agent', tenantId: e.tenantId, agentId: e.agentId, exp: e.exp };
    }
    const holder = this.identities.get(client.id);
    if (holder && JSON.stringify(holder) !== JSON.stringify(id)) {
      if (!(holder.kind === 'agent' && id.kind === 'agent' && holder.tenantId === id.tenantId && holder.agentId === id.agentId)) {
        throw authError(`client id '${client.id}' is in use by another identity`, 5);
      }
    }
    return id;
  }

  /** Closes every connection of an agent (after a revocation). */
  disconnectAgent(tenantId: string | '*', agentId: string): number {
    let n = 0;
    for (const [clientId, id] of this.identities) {
      if (id.kind === 'agent' && id.agentId === agentId && (tenantId === '*' || id.tenantId === tenantId)) {
        this.clients.get(clientId)?.close();
        n++;
      }
    }
    if (n > 0) this.log(`mqtt: closed ${n} connection(s) of revoked agent ${agentId}`);
    return n;
  }

  listen(host: string, port: number): Promise<number> {
    const server = net.createServer((socket) => {
      // Request/response traffic: no Nagle delay (~40 ms per small packet against delayed ACKs).
      socket.setNoDelay(true);
      this.aedes.handle(socket);
    });
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve((server.address() as net.AddressInfo).port));
    });
  }

  async close(): Promise<void> {
    for (const c of this.clients.values()) c.close();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
    await new Promise<void>((r) => this.aedes.close(() => r()));
  }
}
