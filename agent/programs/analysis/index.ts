/** Public API of the program analyses (docs/program-language.md §9, §13–§15, §21). */

export type { AnalysisOptions } from './options.js';
export {
  applySimulatedFaults,
  builtinProfileNames,
  builtinProfiles,
  declaredProfile,
  declaredProfiles,
  profileCatalog,
  type HardwareProfile,
} from './hardware-profiles.js';
export { checkedTargets, NO_TARGET_MESSAGE, reportedTarget, resolveTargets, type TargetResolution } from './target.js';
export { programLevelItems, verifyRobotOnProfile, type HardwareItem, type ItemSeverity } from './hardware-checks.js';
export {
  CERTIFICATION_WARNING,
  robotHardwareItems,
  runHardwareVerification,
  verifyHardware,
  type HardwareMatrixCell,
  type HardwareReport,
  type HardwareVerification,
  type RobotTargetResult,
} from './verify-hardware.js';
export * from './capabilities.js';
export { staticHealth, type HealthCheck, type StaticHealthReport } from './health.js';
export { traceabilityReport, type CapabilityTraceRow, type HardwareTraceRow, type TraceabilityReport } from './traceability.js';
export { renderExpr, renderRobotSafetyRules, renderSafetyRule } from './safety-text.js';
export {
  DEFAULT_MINIMUM_SCORE,
  DEFAULT_WEIGHTS,
  evaluateReadiness,
  evaluateReadinessDetailed,
  readinessPolicy,
  sfc,
  WEIGHT_KEYS,
  type IssueSeverity,
  type ReadinessEvaluation,
  type ReadinessFactor,
  type ReadinessIssue,
  type ReadinessReport,
  type ReadinessStatus,
} from './readiness.js';
export { missionReports, verifyMission, type MissionReport } from './verify-mission.js';
export { verifyContract, type ContractCheck, type ContractResult, type MissionContract } from './contract.js';
