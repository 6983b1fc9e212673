import type { TextForm } from './text-form.js';

interface Tree {
  name: string;
  layer: string;
  version: string;
  branches: Array<{ condition: string; actions: string[] }>;
  signature: string | null;
}

interface Body {
  authorities: Array<{ entity_id: string; local_actions: string[]; requires_central_approval: string[] }>;
  decision_trees: Tree[];
  offline_policies: Array<{ name: string; max_duration_minutes: number | null; allowed_actions: string[]; forbidden_actions: string[] }>;
}

/** `svc decision list FILE`: who may decide what locally, the decision trees by layer, the offline policies. */
export const decisionList: TextForm<Body> = {
  text: (b) => {
    const lines = [`Decision trees (${b.decision_trees.length}):`];
    for (const t of b.decision_trees) {
      lines.push(`  ${t.name} [${t.layer}] v${t.version}${t.signature ? ', signed' : ''}`);
      for (const br of t.branches) lines.push(`    if ${br.condition} → ${br.actions.join(', ')}`);
    }
    lines.push(`Local authorities (${b.authorities.length}):`);
    for (const a of b.authorities) {
      const central = a.requires_central_approval.length ? `; central approval for ${a.requires_central_approval.join(', ')}` : '';
      lines.push(`  ${a.entity_id}: ${a.local_actions.join(', ') || 'no local action'}${central}`);
    }
    lines.push(`Offline policies (${b.offline_policies.length}):`);
    for (const p of b.offline_policies) {
      const max = p.max_duration_minutes === null ? 'no limit' : `at most ${p.max_duration_minutes} min`;
      lines.push(`  ${p.name}: ${max}; allowed ${p.allowed_actions.join(', ') || 'none'}; forbidden ${p.forbidden_actions.join(', ') || 'none'}`);
    }
    return lines.join('\n');
  },
};
