/**
 * Deploy gate, deployment profiles and deployment verification (docs/operations.md § Deployment
 * gate, profiles and verification). Everything is computed per request from what the agent holds
 * now: the loaded configuration, the device pool, the alert ring, the fleet agent registry, the
 * program (parsed, cached by file stamp) and the entity registry. Nothing is stored. Loaded on the
 * first request (the program analyses are a large chunk).
 */
import { API_VERSION } from '../../api/versions.js';
import { badRequest, notFound } from '../core/errors.js';
import { deviceReadinessReport, devicePoolSummary } from '../devices/device-readiness.js';
import type { DeviceRegistry } from '../devices/device-registry.js';
import type { EntityService } from '../entities/entity-service.js';
import { packageTrust } from '../fleet/package-trust.js';
import { blocksLiveDeployment } from '../governance/readiness-blockers.js';
import type { AlertService } from '../observability/alerts.js';
import type { ProjectContext } from '../project/project-context.js';
import { evaluateReadinessDetailed } from '../programs/analysis/readiness.js';
import { safetyAudit } from '../programs/assurance/safety-audit.js';
import type { Program } from '../programs/language/ast.js';
import { loadProgram } from '../programs/program-files.js';
import { allProfiles, builtinProfile, detailRecord, listItem, profileKindOf, profileKindText, resolveProfile, type DeploymentProfile } from './profiles.js';
import { configuredProfile, governedEntities, renderVerificationText, verifyDeployment } from './verification.js';

export interface DeploymentDeps {
  /** Read at each call: an approved configuration change may replace `config`. */
  project: ProjectContext;
  devices: Pick<DeviceRegistry, 'list'>;
  alerts: Pick<AlertService, 'list'>;
  fleetAgentCount: () => number;
  entities: Pick<EntityService, 'view'>;
  /** The entity registry reads program facts only once the program engine ran (ProgramService.prepareFacts). */
  prepareFacts: () => Promise<void>;
}

export interface GateItem {
  name: string;
  passed: boolean;
  message: string;
}

/** The default gate policy: readiness at least 80, safety audit and capability traceability on. */
export const GATE_MIN_READINESS = 80;

export class DeploymentService {
  constructor(private readonly deps: DeploymentDeps) {}

  private get config() {
    return this.deps.project.config;
  }

  /** The loaded program, or null when none is loaded or it does not parse (the gate then has no program gates). */
  private program(): Program | null {
    const file = this.deps.project.programPath;
    if (!file) return null;
    try {
      return loadProgram(file);
    } catch {
      return null;
    }
  }

  async gate() {
    await this.deps.prepareFacts();
    const config = this.config;
    const devices = this.deps.devices.list();
    const readiness = deviceReadinessReport(devices, config?.devices ?? []);
    const pool = devicePoolSummary(devices);
    const agents = this.deps.fleetAgentCount();
    const checklist: GateItem[] = [
      { name: 'config_loaded', passed: config !== null, message: config !== null ? 'configuration resolved' : 'no --config loaded' },
      { name: 'mission_ready', passed: readiness.blocked_count === 0, message: `blocked_devices=${readiness.blocked_count}` },
      { name: 'device_pool_healthy', passed: pool.failed === 0, message: `failed=${pool.failed}, degraded=${pool.degraded}` },
      // Without a configuration there is no fleet to register agents for (kept for compatibility).
      { name: 'fleet_agents_registered', passed: agents > 0 || config === null, message: `agents=${agents}` },
    ];
    const program = this.program();
    const gateItems = program ? this.programGates(program) : null;
    if (gateItems) checklist.push(...gateItems);
    const ready = checklist.every((c) => c.passed);
    return {
      version: API_VERSION,
      ready,
      readiness,
      device_pool: pool,
      alert_count: this.deps.alerts.list().length,
      fleet_agent_count: agents,
      checklist,
      gates: gateItems ? { passed: gateItems.every((g) => g.passed), gates: gateItems } : null,
      // Additive: the panel's deploy dialog reads `checks[].status`.
      checks: checklist.map((c) => ({ name: c.name, status: c.passed ? ('pass' as const) : ('fail' as const), message: c.message })),
    };
  }

  /** Program gates, evaluated with the loaded configuration (which adds package trust and governance). */
  private programGates(program: Program): GateItem[] {
    const config = this.config;
    const evaluation = evaluateReadinessDetailed(program, { config });
    const r = evaluation.report;
    const audit = safetyAudit(program, { config, minimum: evaluation.minimum });
    const failedRows = evaluation.traceability.capability_rows.filter((row) => row.status === 'FAIL').length;
    const traceErrors = evaluation.traceability.errors.length;
    const healthIssues = r.issues.filter((i) => i.factor === 'Health' && (i.severity === 'High' || i.severity === 'Critical')).length;
    const c = audit.counts;
    const gates: GateItem[] = [
      { name: 'readiness', passed: r.mission_ready && r.score.total >= GATE_MIN_READINESS, message: `score ${r.score.total} (min ${GATE_MIN_READINESS}), mission_ready=${r.mission_ready}` },
      { name: 'safety', passed: audit.passed, message: `critical=${c.critical}, high=${c.high}, medium=${c.medium}, low=${c.low}` },
      {
        name: 'capability',
        passed: failedRows === 0 && traceErrors === 0,
        message: failedRows === 0 && traceErrors === 0 ? 'capability traceability passed' : `${failedRows} capability rows failed, ${traceErrors} trace errors`,
      },
      { name: 'health', passed: healthIssues === 0, message: healthIssues === 0 ? 'no high-severity health issues' : `${healthIssues} high-severity health issues` },
    ];
    if (config) {
      const trust = packageTrust(config.tree, this.deps.devices.list());
      const low = trust.packages.filter((p) => !p.trusted);
      gates.push({
        name: 'package_trust',
        passed: low.length === 0,
        message: low.length === 0 ? 'all configured packages meet trust threshold' : `low trust packages: ${low.map((p) => `${p.package} (${p.score}/100)`).join(', ')}`,
      });
      const blocked = governedEntities(this.deps.entities.view(), config).filter((g) => blocksLiveDeployment(g.blockers));
      gates.push({
        name: 'governance',
        passed: blocked.length === 0,
        message: blocked.length === 0 ? 'governance allows live deployment' : `governance blocks live deployment for: ${blocked.map((g) => g.entity.id).join(', ')}`,
      });
    }
    return gates;
  }

  /** The kind `[governance] deployment_profile` names, when it is a catalogue profile. */
  private activeKind(): string | null {
    const name = this.config?.tree['governance'] && (this.config.tree['governance'] as Record<string, unknown>)['deployment_profile'];
    return typeof name === 'string' ? profileKindOf(name) : null;
  }

  private marked<T extends Record<string, unknown>>(p: DeploymentProfile, shape: T): T & { active?: true } {
    return this.activeKind() === profileKindText(p.kind) && typeof p.kind === 'string' ? { ...shape, active: true as const } : shape;
  }

  /** `GET /v1/deployment-profiles`: the list, or with `name`/`profile` present one profile (an unknown name gives a custom one). */
  profiles(query: { name?: string | undefined; profile?: string | undefined }) {
    if (query.name !== undefined || query.profile !== undefined) {
      const name = query.name || query.profile || 'warehouse';
      const profile = resolveProfile(name);
      return { version: API_VERSION, profile: this.marked(profile, detailRecord(profile)) };
    }
    return { version: API_VERSION, profiles: allProfiles().map((p) => this.marked(p, listItem(p))) };
  }

  /** `GET /v1/deployment-profiles/{name}`: a catalogue profile, else 404. */
  profile(name: string) {
    const profile = builtinProfile(name);
    if (!profile) throw notFound(`Unknown deployment profile '${name}'`);
    return { version: API_VERSION, profile: this.marked(profile, detailRecord(profile)) };
  }

  async verify(options: { strict: boolean; entityId?: string | undefined }) {
    const config = this.config;
    if (!config) throw badRequest('No configuration loaded');
    configuredProfile(config); // an unknown configured profile is a 404 before any work
    await this.deps.prepareFacts();
    const report = verifyDeployment(this.deps.entities.view(), config, { strict: options.strict, ...(options.entityId !== undefined ? { entityId: options.entityId } : {}) });
    return { version: API_VERSION, report, text: renderVerificationText(report) };
  }
}
