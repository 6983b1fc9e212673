/**
 * The assurance and diagnosis policies in force: configuration over defaults. Pure: reads the
 * resolved configuration tree.
 */
import { pick, table } from './config-tables.js';

export const ASSURANCE_POLICY_DEFAULTS = { minimum_score: 70, require_recovery: true, require_resilience: true, require_mitigations: false, require_anomaly_handlers: false };

const DIAGNOSIS_KEYS = ['require_mitigations', 'require_anomaly_handlers'];

/** `[assurance]` over the defaults, and which keys the configuration set. */
export function assurancePolicy(tree: Record<string, unknown> | undefined) {
  const keys = Object.keys(ASSURANCE_POLICY_DEFAULTS);
  const configured = pick(table(tree, 'assurance'), keys);
  return { policy: { ...ASSURANCE_POLICY_DEFAULTS, ...configured }, configured: Object.keys(configured).sort() };
}

/** `[diagnosis]` wins over `[assurance]`, which wins over the defaults; `sources` says which gave each key. */
export function diagnosisPolicy(tree: Record<string, unknown> | undefined) {
  const fromAssurance = pick(table(tree, 'assurance'), DIAGNOSIS_KEYS);
  const fromDiagnosis = pick(table(tree, 'diagnosis'), DIAGNOSIS_KEYS);
  const policy = { require_mitigations: false, require_anomaly_handlers: false, ...fromAssurance, ...fromDiagnosis };
  const sources = Object.fromEntries(DIAGNOSIS_KEYS.map((k) => [k, k in fromDiagnosis ? 'diagnosis' : k in fromAssurance ? 'assurance' : 'default']));
  return { policy, sources };
}
