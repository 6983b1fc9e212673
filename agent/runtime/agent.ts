import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import path from 'node:path';
import type { WebSocketServer } from 'ws';
import { SPECS } from '../../api/index.js';
import type { OperationSpec } from '../../api/spec.js';
import { ApiError } from '../core/errors.js';
import { bindOperations, type HandlerBinding } from '../core/handlers.js';
import type { Boot } from '../core/module.js';
import type { ProgramFactsSource } from '../entities/program-facts.js';
import { EventBus } from '../events/event-bus.js';
import { loadProjectContext } from '../project/project-context.js';
import { resolveSecrets } from '../security/secrets.js';
import { loadSettings, type Settings } from '../settings/settings.js';
import { ensureStateDir } from '../state/state-dir.js';
import type { GrpcServer } from '../transports/grpc/grpc-server.js';
import type { HttpStack } from '../transports/http/http-stack.js';
import type { RelayTrunk } from '../transports/relay/relay-trunk.js';
import type { StreamConnection } from '../transports/ws/stream-connection.js';
import { formatBindAddress, parseBindAddress } from './bind-address.js';
import { MODULES } from './modules.js';
import type { Services } from './services.js';
import { SVC_VERSION } from './versions.js';

export interface AgentOptions {
  configPath?: string | null;
  programPath?: string | null;
  /** `host:port`; port 0 picks a free one. Default `127.0.0.1:8080`. */
  bind?: string;
  grpcBind?: string | null;
  env?: Record<string, string | undefined>;
  cwd?: string;
  log?: (line: string) => void;
  /**
   * The relay trunk (`svc serve --relay URL --enroll-token TOKEN`); each value set here wins over
   * `SVC_RELAY_URL` / `SVC_RELAY_ENROLL_TOKEN`.
   */
  relay?: { url?: string | null; enrollToken?: string | null };
  /** Trunk tuning for tests (backoff bounds, keep-alive, chunk size). */
  relayTuning?: { backoffBaseMs?: number; backoffMaxMs?: number; keepaliveSecs?: number; maxEnvelopeBytes?: number };
  /**
   * Facts of the loaded program for the entity registry (robots, sensors, actuators, missions).
   * Until the program parser is connected here the registry sees no program (`() => null`).
   */
  programFacts?: ProgramFactsSource;
}

export const DEFAULT_BIND = '127.0.0.1:8080';
/** Largest message a stream client may send (ping/resume are a few hundred bytes); larger closes with 1009. */
export const MAX_STREAM_CLIENT_MESSAGE_BYTES = 64 * 1024;

/**
 * The composition root: settings, state, domain services and the event wiring, built once. The
 * CLI uses `services` in-process; `listen()` adds the network transports.
 */
export class Agent {
  private server: Server | null = null;
  private wss: WebSocketServer | null = null;
  /** The REST + WebSocket stack, loaded on the first request or upgrade (see `listen()`). */
  private httpStack: Promise<HttpStack> | null = null;
  private grpc: GrpcServer | null = null;
  /** The relay trunk, when started with `--relay` (loaded by a dynamic import only then). */
  private relayTrunk: RelayTrunk | null = null;
  /** This agent's open stream connections, closed with it. */
  private readonly openStreams = new Set<StreamConnection>();

  private constructor(
    readonly services: Services,
    private readonly options: AgentOptions,
    private readonly log: (line: string) => void,
    /** Opened modules with something to close, in opening order. */
    private readonly modules: { name: string; close: () => void | Promise<void> }[],
  ) {}

  static async create(options: AgentOptions = {}, extra: ExtraOperations = {}): Promise<Agent> {
    const cwd = options.cwd ?? process.cwd();
    const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
    const settings: Settings = loadSettings(options.env, cwd);
    ensureStateDir(settings.stateDir);
    // Configured secrets win; anything not configured comes from (or is generated into) the state
    // directory's owner-only secrets.json, never from a path or a constant (docs/security.md §2).
    const secrets = resolveSecrets(settings, log);
    const project = loadProjectContext({ configPath: options.configPath ?? null, programPath: options.programPath ?? null, cwd });

    // The container starts with what the agent itself knows; each module adds its services.
    const services = {
      settings,
      startedAtMs: Date.now(),
      listen: { bind: null, grpcBind: null },
      relayLink: { source: null },
      project,
      bus: new EventBus(),
      operations: [],
    } as Partial<Services> as Services;
    const provided = new Set<string>(Object.keys(services));
    const boot: Boot = { secrets, cwd, log, ...(options.programFacts ? { programFacts: options.programFacts } : {}) };
    const handlers: HandlerBinding[] = [];
    const opened: { name: string; close: () => void | Promise<void> }[] = [];
    try {
      for (const module of MODULES) {
        const m = await module.open({
          boot,
          use: (name) => {
            if (!provided.has(name)) throw new Error(`module ${module.name} uses ${name}, which no module opened before it provides`);
            return services[name];
          },
        });
        Object.assign(services, m.provides);
        for (const name of Object.keys(m.provides ?? {})) provided.add(name);
        handlers.push(...(m.handlers ?? []));
        if (m.close) opened.push({ name: module.name, close: m.close.bind(m) });
      }
      services.operations = bindOperations([...SPECS, ...(extra.specs ?? [])], [...handlers, ...(extra.handlers ?? [])], services);
    } catch (err) {
      await closeModules(opened, log);
      throw err;
    }
    return new Agent(services, options, log, opened);
  }

  /**
   * Binds the REST + WebSocket listener and, when `grpcBind` is set, the gRPC listener; resolves with
   * the bound REST `host:port` (the gRPC one is `services.listen.grpcBind`).
   */
  async listen(): Promise<string> {
    const { host, port } = parseBindAddress(this.options.bind ?? DEFAULT_BIND);
    // A relay trunk is checked before anything listens (a token of another tenant stops the start);
    // its code, mqtt.js included, is loaded only when one is configured.
    const trunk = await this.prepareRelay(host);
    // The socket listens first; the HTTP stack (Hono, its node adapter, ws, the routes of every
    // operation, and Node's fetch classes that the adapter pulls in) loads on the first request or
    // WebSocket upgrade, which wait for it. An agent nobody has called yet does not carry it.
    const server = createServer();
    this.server = server;
    const pendingRequest = (req: IncomingMessage, res: ServerResponse) => {
      this.loadHttpStack(server, host).then(
        (stack) => stack.listener(req, res),
        (err: Error) => {
          this.log(`internal error: HTTP stack: ${err.stack ?? err.message}`);
          if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json; charset=utf-8' });
          res.end(JSON.stringify(new ApiError(500, 'internal_error', 'internal error').toEnvelope()));
        },
      );
    };
    const pendingUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      this.loadHttpStack(server, host).then(
        // The adapter's own upgrade listener is in place now: hand the upgrade to it.
        () => server.emit('upgrade', req, socket, head),
        () => socket.destroy(),
      );
    };
    server.on('request', pendingRequest);
    server.on('upgrade', pendingUpgrade);
    this.detachPending = () => {
      server.off('request', pendingRequest);
      server.off('upgrade', pendingUpgrade);
    };
    server.listen(port, host);
    await new Promise<void>((resolve, reject) => {
      if (server.listening) return resolve();
      server.once('listening', resolve);
      server.once('error', reject);
    });
    const addr = server.address() as AddressInfo;
    this.services.listen.bind = formatBindAddress(addr.address, addr.port);
    if (this.options.grpcBind) {
      try {
        // Loaded only when asked for: an agent without gRPC never pays for nice-grpc and protobufjs at start.
        const { GrpcServer } = await import('../transports/grpc/grpc-server.js');
        this.grpc = await GrpcServer.start(this.services, this.options.grpcBind, this.log);
      } catch (err) {
        await this.close();
        throw new Error(`gRPC listener on ${this.options.grpcBind}: ${(err as Error).message}`);
      }
      this.services.listen.grpcBind = this.grpc.address;
    }
    if (this.services.credentials.keysLoaded === 0) {
      this.log('warning: no API key is configured (SVC_API_KEY or an API keys file); every mutation will be refused');
    }
    // The HAL opens its configured ports, buses and broker in the background; links retry on their own.
    void this.services.deviceHub.start().catch((err: Error) => this.log(`warning: HAL start: ${err.message}`));
    // The relay trunk dials out in the background: an unreachable relay never delays or affects the LAN API.
    if (trunk) {
      this.relayTrunk = trunk;
      this.services.credentials.relay = trunk.verifier;
      this.services.relayLink.source = () => trunk.status();
      trunk.start();
    }
    return this.services.listen.bind;
  }

  private async prepareRelay(host: string): Promise<RelayTrunk | null> {
    const s = this.services.settings;
    const url = this.options.relay?.url ?? s.relay.url;
    const token = this.options.relay?.enrollToken ?? s.relay.enrollToken;
    if (!url && !token) return null;
    if (!url) throw new Error('an enrollment token is set but no relay URL (--relay URL or SVC_RELAY_URL)');
    if (!token) throw new Error('a relay URL is set but no enrollment token (--enroll-token TOKEN or SVC_RELAY_ENROLL_TOKEN; `svc relay enroll` prints one)');
    const { RelayTrunk } = await import('../transports/relay/relay-trunk.js');
    const server = () => this.server;
    return RelayTrunk.prepare({
      url,
      enrollToken: token,
      tenantId: s.tenantId,
      stateDir: s.stateDir,
      outboxFrames: s.relay.outboxFrames,
      agentVersion: SVC_VERSION,
      maxBodyBytes: s.maxBodyBytes,
      telemetry: this.services.telemetry,
      bind: () => this.services.listen.bind,
      dispatch: async (req) => {
        const srv = server();
        if (!srv) throw new Error('the agent is closed');
        return (await this.loadHttpStack(srv, host)).dispatch(req);
      },
      log: this.log,
      ...this.options.relayTuning,
    });
  }

  /** The relay trunk's state (null without `--relay`). */
  get relayStatus(): ReturnType<RelayTrunk['status']> | null {
    return this.relayTrunk?.status() ?? null;
  }

  /** Removes the listeners that wait for the HTTP stack. */
  private detachPending: (() => void) | null = null;

  /** Loads and attaches the HTTP stack once; concurrent first requests share the load. */
  private loadHttpStack(server: Server, hostname: string): Promise<HttpStack> {
    this.httpStack ??= import('../transports/http/http-stack.js').then(({ attachHttpStack }) => {
      if (this.server !== server) throw new Error('the agent is closed');
      // The waiting listeners go first: the adapter adds its own `upgrade` listener and rejects a
      // bad upgrade itself only when that is the sole one.
      this.detachPending?.();
      this.detachPending = null;
      const stack = attachHttpStack(server, {
        hostname,
        services: this.services,
        operations: this.services.operations,
        openStreams: this.openStreams,
        maxPayload: MAX_STREAM_CLIENT_MESSAGE_BYTES,
      });
      server.on('request', stack.listener);
      this.wss = stack.wss;
      return stack;
    });
    return this.httpStack;
  }

  /** Open stream connections (for diagnostics and tests). */
  get streams(): ReadonlySet<StreamConnection> {
    return this.openStreams;
  }

  get stateDir(): string {
    return this.services.settings.stateDir;
  }

  /** The bound gRPC `host:port`, or null when no gRPC listener runs. */
  get grpcAddress(): string | null {
    return this.grpc?.address ?? null;
  }

  /** Stops listening, closes streams, and flushes every store. Safe to call twice. */
  async close(): Promise<void> {
    if (this.relayTrunk) {
      const trunk = this.relayTrunk;
      this.relayTrunk = null;
      this.services.credentials.relay = null;
      this.services.relayLink.source = null;
      await trunk.close();
    }
    if (this.grpc) {
      const grpc = this.grpc;
      this.grpc = null;
      await grpc.close();
    }
    for (const s of this.openStreams) s.dispose();
    this.openStreams.clear();
    if (this.wss) {
      for (const client of this.wss.clients) client.terminate();
      this.wss.close();
      this.wss = null;
    }
    if (this.server) {
      const server = this.server;
      this.server = null;
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      });
    }
    const modules = this.modules.splice(0);
    await closeModules(modules, this.log);
  }
}

/** Extra specs and handlers beside the contract's (tests probing a new domain). */
export interface ExtraOperations {
  specs?: readonly OperationSpec[];
  handlers?: readonly HandlerBinding[];
}

/** Closes modules in reverse order of opening; one failing to close does not keep the others open. */
async function closeModules(modules: readonly { name: string; close: () => void | Promise<void> }[], log: (line: string) => void): Promise<void> {
  for (const m of [...modules].reverse()) {
    try {
      await m.close();
    } catch (err) {
      log(`warning: closing ${m.name}: ${(err as Error).message}`);
    }
  }
}

export function describeStateDir(services: Services): string {
  return path.relative(process.cwd(), services.settings.stateDir) || '.';
}
