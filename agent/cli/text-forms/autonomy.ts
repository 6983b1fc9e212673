import type { TextForm } from './text-form.js';

interface Reflex {
  id: string;
  trigger: string;
  action: string;
  priority: number;
  severity: string;
  enabled: boolean;
  source: string;
}

/** `svc reflex list`: every reflex with its priority, severity, trigger and action. */
export const reflexList: TextForm<{ reflexes: Reflex[] }> = {
  text: ({ reflexes }) => {
    const rows = reflexes.map((r) => [r.id, `priority ${r.priority}`, r.severity, `${r.trigger} → ${r.action}`, `(${r.source}${r.enabled ? '' : ', disabled'})`]);
    const widths = rows[0]?.map((_, c) => Math.max(...rows.map((r) => r[c]!.length))) ?? [];
    return [`Reflexes (${reflexes.length}):`, ...rows.map((r) => `  ${r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]!))).join('  ')}`)].join('\n');
  },
};

interface Report {
  entity_id: string;
  stable: boolean;
  metrics: Array<{ name: string; value: number; unit: string }>;
  drift_signals: Array<{ metric: string; direction: string; severity: string; value?: number }>;
  corrections: Array<{ metric: string; action: string; rationale: string }>;
}

function reportLines(r: Report): string[] {
  if (r.stable) return [`  ${r.entity_id}: stable`];
  const lines = [`  ${r.entity_id}: UNSTABLE`];
  for (const d of r.drift_signals) lines.push(`    ${d.metric}${d.value !== undefined ? ` = ${d.value}` : ''} ${d.direction.replace(/_/g, ' ')} (${d.severity})`);
  for (const c of r.corrections) lines.push(`    correction: ${c.action} (${c.rationale})`);
  return lines;
}

/** `svc homeostasis check`: the agent's own figures, then every entity out of its set points; exit 1 when any is. */
export const homeostasisCheck: TextForm<{ policy_source: string; platform: Report; reports: Report[]; truncated?: boolean }> = {
  text: (b) => {
    const all = [b.platform, ...b.reports];
    const unstable = all.filter((r) => !r.stable);
    const lines = [`Homeostasis: ${unstable.length} of ${all.length} out of their set points (set points: ${b.policy_source.replace(/_/g, ' ')})`];
    lines.push(...reportLines(b.platform));
    lines.push(`    ${b.platform.metrics.map((m) => `${m.name} ${m.value}${m.unit === 'pct' ? '%' : m.unit === 'ratio' ? '' : ` ${m.unit}`}`).join(', ')}`);
    for (const r of b.reports) if (!r.stable) lines.push(...reportLines(r));
    const stable = b.reports.filter((r) => r.stable).length;
    if (stable > 0) lines.push(`  ${stable} entit${stable === 1 ? 'y' : 'ies'} stable`);
    if (b.truncated) lines.push('  (list truncated)');
    return lines.join('\n');
  },
  passed: (b) => b.platform.stable && b.reports.every((r) => r.stable),
};
