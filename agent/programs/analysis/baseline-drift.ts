/**
 * Configuration drift against a saved baseline project (CLI `svc readiness --baseline DIR`, `svc
 * explain --baseline DIR`, docs/programs.md "The CLI"): DIR holds a copy of the project's
 * configuration as it was approved (its `svc.toml` and fragments). Both sides are compared with the
 * drift checks of docs/operations.md § Drift (configured devices only: a CLI run has no live pool),
 * and each finding becomes a readiness issue of rule 3 (docs/program-language.md §9.5, "baseline
 * drift").
 */
import path from 'node:path';
import { liveResolved } from '../../config-control/snapshot-model.js';
import { DeviceRegistry } from '../../devices/device-registry.js';
import { configDrift } from '../../drift/config-drift.js';
import { buildReport, type DriftReport, type DriftSeverity } from '../../drift/drift-model.js';
import { resolveProjectConfig, type ResolvedConfig } from '../../project/resolve-config.js';
import type { IssueSeverity, ReadinessIssue } from './readiness.js';

export interface BaselineDrift {
  /** The baseline directory, as given. */
  baseline: string;
  report: DriftReport;
}

const SEVERITY: Record<DriftSeverity, IssueSeverity> = { info: 'Info', low: 'Low', medium: 'Medium', high: 'High', critical: 'Critical' };

function snapshot(config: ResolvedConfig) {
  return liveResolved(config, DeviceRegistry.fromConfig(config).list());
}

/**
 * Drift of `current` since the configuration saved in `baselineDir` (a ConfigError when it has no
 * svc.toml): the checks that compare the two sides (1–13). The program-against-mapping checks (14–16)
 * judge the current configuration alone, which readiness does in its own rules, so they are left out.
 */
export function baselineDrift(baselineDir: string, current: ResolvedConfig): BaselineDrift {
  const base = resolveProjectConfig(path.resolve(baselineDir));
  return { baseline: baselineDir, report: buildReport(configDrift(snapshot(base), snapshot(current), null)) };
}

export function driftIssues(drift: BaselineDrift): ReadinessIssue[] {
  return drift.report.findings.map((f) => ({
    factor: 'Configuration',
    severity: SEVERITY[f.severity],
    message: `Drift since baseline ${drift.baseline}: ${f.message}`,
    suggested_action: 'Review the change against the baseline, or save the current configuration as the new baseline',
  }));
}
