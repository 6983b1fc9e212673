import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import path from 'node:path';
import type { WebSocketServer } from 'ws';
import { MutationAudit } from '../audit/mutation-audit.js';
import { ApiError } from '../core/errors.js';
import type { Operation } from '../core/operation.js';
import { canFactory } from '../devices/attachments/can-factory.js';
import { mqttFactory } from '../devices/attachments/mqtt-factory.js';
import { serialFactory } from '../devices/attachments/serial-factory.js';
import { DeviceHub } from '../devices/device-hub.js';
import { DevicePool } from '../devices/device-pool.js';
import { DeviceRegistry } from '../devices/device-registry.js';
import { resolveHalSettings } from '../settings/hal.js';
import { HealthMonitor } from '../devices/health-monitor.js';
import { EntityService } from '../entities/entity-service.js';
import type { ProgramFactsSource } from '../entities/program-facts.js';
import { IncidentService } from '../incidents/incidents.js';
import { EventBus } from '../events/event-bus.js';
import { streamEventName } from '../events/platform-events.js';
import { FleetService } from '../fleet/fleet-service.js';
import { AlertService } from '../observability/alerts.js';
import { openTraceRing } from '../observability/traces.js';
import { OPERATIONS } from '../operations/index.js';
import { loadProjectContext } from '../project/project-context.js';
import { ProgramService } from '../programs/program-service.js';
import { ApiKeyStore } from '../security/api-keys.js';
import { Credentials } from '../security/credentials.js';
import { resolveSecrets } from '../security/secrets.js';
import { OidcService } from '../security/oidc/oidc-service.js';
import { SessionTokens } from '../security/sessions.js';
import { UserDirectory } from '../security/users.js';
import { RateLimiter } from '../security/rate-limit.js';
import { loadSettings, type Settings } from '../settings/settings.js';
import { ensureStateDir } from '../state/state-dir.js';
import { TelemetryStore } from '../telemetry/telemetry-store.js';
import type { GrpcServer } from '../transports/grpc/grpc-server.js';
import type { HttpStack } from '../transports/http/http-stack.js';
import type { StreamConnection } from '../transports/ws/stream-connection.js';
import { formatBindAddress, parseBindAddress } from './bind-address.js';
import type { Services } from './services.js';

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
  /** This agent's open stream connections, closed with it. */
  private readonly openStreams = new Set<StreamConnection>();

  private constructor(
    readonly services: Services,
    private readonly options: AgentOptions,
    private readonly log: (line: string) => void,
  ) {}

  static async create(options: AgentOptions = {}, operations: readonly Operation[] = OPERATIONS): Promise<Agent> {
    const cwd = options.cwd ?? process.cwd();
    const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
    const settings: Settings = loadSettings(options.env, cwd);
    ensureStateDir(settings.stateDir);
    // Configured secrets win; anything not configured comes from (or is generated into) the state
    // directory's owner-only secrets.json, never from a path or a constant (docs/security.md §2).
    const secrets = resolveSecrets(settings, log);
    const project = loadProjectContext({ configPath: options.configPath ?? null, programPath: options.programPath ?? null, cwd });

    const bus = new EventBus();
    const telemetry = new TelemetryStore(settings.stateDir, {
      capacity: settings.rings.telemetry,
      historyMaxBytes: settings.telemetryHistoryMaxBytes,
      historyFiles: settings.telemetryHistoryFiles,
    });
    // Platform events reach the stream (and the telemetry history) as `kind: platform` telemetry.
    bus.subscribe((e) =>
      telemetry.append({
        kind: 'platform',
        event_type: streamEventName(e.type),
        source: e.source,
        ...(e.entity_id !== undefined ? { entity_id: e.entity_id } : {}),
        payload: e.payload,
        timestamp_ms: Date.parse(e.timestamp),
      }),
    );

    const alerts = await AlertService.open(settings.stateDir, settings.rings.alerts, settings.alertDedupSecs, log);
    const hal = resolveHalSettings(settings.hal, project.config);
    const devices = await DeviceRegistry.open(settings.stateDir, project.config);
    const health = new HealthMonitor({ devices, bus, alerts, telemetry }, hal.offlineAfterMs);
    const deviceHub = new DeviceHub({ registry: devices, health, telemetry, bus, hal, log });
    deviceHub.register(mqttFactory(hal));
    deviceHub.register(serialFactory(hal));
    deviceHub.register(canFactory(hal));
    const programs = new ProgramService({
      projectRoot: project.projectRoot,
      config: project.config,
      programPath: project.programPath,
      stateDir: settings.stateDir,
      decisions: settings.decisions,
      confineToRoot: true,
      cwd,
      devices: () => devices.list().map((d) => ({ id: d.id, logical_name: d.logical_name, type: d.device_type })),
    });
    const audit = new MutationAudit(settings.stateDir, settings.mutationAuditPath, secrets.auditSigningKey, bus, alerts, log, {
      segmentBytes: settings.auditSegmentBytes,
    });
    const entities = await EntityService.open({
      overlayFile: settings.entityOverlayPath,
      config: project.config,
      devices: () => devices.list(),
      // Robots and missions of the --program (entity operations await programs.prepareFacts()).
      programFacts: options.programFacts ?? (() => programs.programFacts()),
      bus,
      alerts: () => alerts.list(),
      // Streamed from the chain's files: no copy of the chain is kept in memory.
      auditRecords: () => audit.chain.records(),
      warn: (m) => log(`warning: ${m}`),
    });
    const users = await UserDirectory.open(settings.stateDir, project.config?.humans ?? []);
    const services: Services = {
      settings,
      startedAtMs: Date.now(),
      listen: { bind: null, grpcBind: null },
      project,
      bus,
      traces: await openTraceRing(settings.stateDir, settings.rings.traces),
      alerts,
      telemetry,
      devices,
      devicePool: new DevicePool(devices, health, alerts, project.config),
      hal,
      deviceHub,
      incidents: await IncidentService.open(settings.stateDir, alerts),
      fleet: new FleetService({ devices: () => devices.list(), config: () => project.config, linkStats: () => deviceHub.stats() }),
      entities,
      credentials: new Credentials(
        await ApiKeyStore.open({
          file: settings.apiKeysFile,
          pepper: secrets.pepper,
          // Keys files of earlier versions were hashed with the specification's fallback pepper.
          legacyPepper: secrets.explicit.pepper ? null : settings.legacyPepper,
          tenantId: settings.tenantId,
          envKey: settings.apiKey,
          log,
        }),
        new SessionTokens({ ...settings.session, secret: secrets.sessionSecret, tenantId: settings.tenantId }),
        // Sessions are checked against the directory on every request and every refresh.
        users,
      ),
      users,
      oidc: await OidcService.open({ stateDir: settings.stateDir, redirectUri: settings.oidc.redirectUri, log }),
      audit,
      rateLimiter: new RateLimiter(settings.rateLimitPerMinute),
      programs,
      operations,
    };
    return new Agent(services, options, log);
  }

  /**
   * Binds the REST + WebSocket listener and, when `grpcBind` is set, the gRPC listener; resolves with
   * the bound REST `host:port` (the gRPC one is `services.listen.grpcBind`).
   */
  async listen(): Promise<string> {
    const { host, port } = parseBindAddress(this.options.bind ?? DEFAULT_BIND);
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
    return this.services.listen.bind;
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
    this.services.telemetry.close();
    this.services.audit.close();
    await this.services.traces.close();
    await this.services.alerts.close();
    await this.services.users.flush();
    await this.services.deviceHub.close();
    await this.services.devices.flush();
    await this.services.incidents.flush();
    await this.services.entities.flush();
    await this.services.oidc.flush();
    await this.services.credentials.keys.flush();
  }
}

export function describeStateDir(services: Services): string {
  return path.relative(process.cwd(), services.settings.stateDir) || '.';
}
