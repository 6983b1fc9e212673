/**
 * Verify capabilities (docs/program-language.md §14): per-robot capability rows (§9.7), static health
 * (§9.9) and, on request, traceability (§9.10). Also the public entry point for the capability
 * helpers other operations reuse.
 */
import type { Program } from '../language/ast.js';
import type { AnalysisOptions } from './options.js';
import { analyseCapabilities, capabilityReports, type RobotCapabilityReport } from './capability-inference.js';
import { staticHealth, type StaticHealthReport } from './health.js';
import { traceabilityReport, type TraceabilityReport } from './traceability.js';

export {
  analyseCapabilities,
  analyseRobotCapabilities,
  capabilityReports,
  inferCapabilities,
  minimumCapabilities,
  MISSION_MINIMUM_CAPABILITIES,
  robotComponents,
} from './capability-inference.js';
export type {
  CapabilityRow,
  CapabilitySource,
  CapabilityStatus,
  MinimumCapabilitiesResult,
  MinimumCapabilityItem,
  RobotCapabilityAnalysis,
  RobotCapabilityReport,
  RobotComponents,
} from './capability-inference.js';
export { capabilityMinimum, isKnownCapability, isOperatorCapability, OPERATOR_CAPABILITIES } from './capability-registry.js';

export interface VerifyCapabilitiesOptions extends AnalysisOptions {
  traceability?: boolean;
}

/** docs/program-language.md §14 body fields (the service adds `version` and `file`). */
export interface VerifyCapabilitiesResult {
  capabilities: RobotCapabilityReport[];
  health: StaticHealthReport;
  traceability: TraceabilityReport | null;
}

export function verifyCapabilities(program: Program, opts: VerifyCapabilitiesOptions): VerifyCapabilitiesResult {
  const analyses = analyseCapabilities(program);
  return {
    capabilities: capabilityReports(program, analyses),
    health: staticHealth(program),
    traceability: opts.traceability === true ? traceabilityReport(program, opts.config, analyses) : null,
  };
}
