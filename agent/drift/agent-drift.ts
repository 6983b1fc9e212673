import type { SnapshotResolved } from '../config-control/snapshot-model.js';
import type { Program } from '../programs/language/ast.js';
import { finding, show, type DriftFinding } from './drift-model.js';

/**
 * Agent drift (docs/operations.md § Drift, "Agents"): what each deployed agent should be running,
 * from the program and the current configuration, against what it reports on `GET /v1/status`.
 */

export interface ExpectedAgentState {
  /** `<Robot>@<Hardware>` for a deploy declaration, else the robot's name. */
  key: string;
  robot: string;
  hardware_profile: string | null;
  program_hash: string;
  firmware_by_device: Record<string, string>;
  packages: string[];
  attestation_contracts: string[];
}

/** What an agent's `GET /v1/status` may report (deploy agents and fleet agents alike). */
export interface AgentStatus {
  healthy?: unknown;
  program_hash?: unknown;
  hardware_profile?: unknown;
  firmware_version?: unknown;
  packages?: unknown;
  attestation_contract?: unknown;
  attestation_verified?: unknown;
  boot_state?: unknown;
}

const ATTESTATION_IMPORTS = ['trust.jetson', 'trust.pi'];

export function expectedAgentStates(program: Program, programHash: string, current: SnapshotResolved): ExpectedAgentState[] {
  const attestation = program.imports.filter((i) => ATTESTATION_IMPORTS.includes(i));
  const common = (robot: string) => {
    const firmware: Record<string, string> = {};
    for (const d of current.device_pool) {
      if ((d.robot_id === null || d.robot_id === robot) && d.firmware_version) firmware[d.id] = d.firmware_version;
    }
    return { robot, program_hash: programHash, firmware_by_device: firmware, packages: [...current.config.packages], attestation_contracts: attestation };
  };
  const out: ExpectedAgentState[] = [];
  for (const deploy of program.deploys) {
    for (const hw of deploy.targets) out.push({ key: `${deploy.robot}@${hw}`, hardware_profile: hw, ...common(deploy.robot) });
  }
  if (out.length === 0 && program.robots.length > 0) {
    const robot = program.robots[0]!.name;
    const configured = current.config.robots.find((r) => r.id === robot)?.hardware_profile ?? null;
    out.push({ key: robot, hardware_profile: configured, ...common(robot) });
  }
  return out;
}

function reportedPackages(v: unknown): string[] | null {
  if (Array.isArray(v)) return v.map((x) => (typeof x === 'string' ? x : x && typeof x === 'object' && typeof (x as { name?: unknown }).name === 'string' ? (x as { name: string }).name : null)).filter((x): x is string => x !== null);
  if (v && typeof v === 'object') return Object.keys(v);
  return null;
}

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

export function agentFindings(expected: ExpectedAgentState, status: AgentStatus): DriftFinding[] {
  const a = expected.key;
  const out: DriftFinding[] = [];
  if (status.healthy === false) out.push(finding('hardware', 'high', `agent '${a}' reported unhealthy status`, `agents.${a}.healthy`));
  if (expected.hardware_profile) {
    const hw = str(status.hardware_profile);
    if (hw === null) out.push(finding('hardware', 'medium', `agent '${a}' reported no hardware profile (expected ${show(expected.hardware_profile)})`, `agents.${a}.hardware_profile`));
    else if (hw !== expected.hardware_profile) {
      out.push(finding('hardware', 'high', `agent '${a}' hardware profile: expected ${show(expected.hardware_profile)}, actual ${show(hw)}`, `agents.${a}.hardware_profile`));
    }
  }
  const hash = str(status.program_hash);
  if (hash === null) out.push(finding('program', 'high', `agent '${a}' reported no program hash`, `agents.${a}.program_hash`));
  else if (hash.toLowerCase() !== expected.program_hash) {
    out.push(finding('program', 'critical', `agent '${a}' program hash: expected ${show(expected.program_hash)}, actual ${show(hash)}`, `agents.${a}.program_hash`));
  }
  const firmware = new Set(Object.values(expected.firmware_by_device));
  if (firmware.size > 0) {
    const fw = str(status.firmware_version);
    if (fw === null) out.push(finding('firmware', 'medium', `agent '${a}' reported no firmware version`, `agents.${a}.firmware_version`));
    else if (!firmware.has(fw)) out.push(finding('firmware', 'high', `agent '${a}' firmware ${show(fw)} is not one of the configured ${JSON.stringify([...firmware].sort())}`, `agents.${a}.firmware_version`));
  }
  const reported = reportedPackages(status.packages);
  if (expected.packages.length > 0 && reported !== null) {
    for (const p of expected.packages) if (!reported.includes(p)) out.push(finding('package', 'high', `agent '${a}' is missing package '${p}'`, `agents.${a}.package.${p}`));
    for (const p of reported) if (!expected.packages.includes(p)) out.push(finding('package', 'medium', `agent '${a}' has unexpected package '${p}'`, `agents.${a}.package.${p}`));
  }
  if (expected.attestation_contracts.length > 0) {
    if (status.attestation_verified === false) out.push(finding('safety', 'critical', `agent '${a}' attestation failed`, `agents.${a}.attestation_verified`));
    else if (status.attestation_verified === undefined || status.attestation_verified === null) {
      out.push(finding('safety', 'high', `agent '${a}' reported no attestation result`, `agents.${a}.attestation_verified`));
    }
    const contract = str(status.attestation_contract);
    if (contract !== null && !expected.attestation_contracts.includes(contract)) {
      out.push(finding('safety', 'medium', `agent '${a}' attestation contract ${show(contract)} is not one the program imports`, `agents.${a}.attestation_contract`));
    }
  }
  const boot = str(status.boot_state)?.toLowerCase();
  if (boot === 'compromised' || boot === 'tampered' || boot === 'failed') {
    out.push(finding('safety', 'critical', `agent '${a}' boot state is ${boot}`, `agents.${a}.boot_state`));
  }
  return out;
}
