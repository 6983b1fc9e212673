import { describe, expect, it } from 'vitest';
import { auditDecisions, flattenEvidence } from '../../../agent/programs/assurance/audit-decisions.js';
import { frame } from './factory.js';

const v3 = frame(300, 'decision_tree_eval', {
  version: 3,
  decision_id: 'd-300-decision_tree_eval',
  mission: 'Patrol',
  decision: 'stop_drive',
  reason: 'lidar.nearest_distance < 0.5m',
  layer: 'reflex',
  evidence: { tree: 'AisleReflex', condition: 'lidar.nearest_distance < 0.5m', actions: ['stop_drive', 'sound_horn'], signals: { lidar: 0.4 } },
  alternatives_considered: ['switch_to lidar_localization'],
  safety_checks: [{ rule: 'distributed_decision', passed: true }],
});

const trace = {
  source: 'patrol.sd',
  frames: [
    frame(100, 'behavior_tick', { iteration: 1 }),
    frame(150, 'safety_stop', { rule: 'stop_if' }),
    v3,
    frame(350, 'provider_call', { function: 'infer', failed: false }),
    frame(400, 'continuity_takeover', { peer: 'Scout' }),
    frame(500, 'kill_switch', { name: 'FloorStop' }),
    frame(600, 'mission_approval_required', { actor: 'shift_lead' }),
    frame(700, 'recovery_started', { policy: 'P' }),
    frame(800, 'topic_publish', { topic: '/x' }),
  ],
};

describe('auditDecisions', () => {
  it('keeps v3 records, synthesises v1 records and skips the rest', () => {
    const result = auditDecisions(trace, { source: '/p/patrol.trace' });
    expect(result.decision_count).toBe(7);
    expect(result.explanation).toBeNull();
    expect(result.report.source).toBe('/p/patrol.trace');
    expect(result.report.decision_count).toBe(7);
    expect(result.report.timeline.source).toBe('patrol.sd');
    const decisions = result.report.timeline.decisions;
    expect(decisions.map((d) => [d.decision_id, d.decision, d.version])).toEqual([
      ['d-150-safety_stop', 'safety_gate', 1],
      ['d-300-decision_tree_eval', 'stop_drive', 3],
      ['d-350-provider_call', 'provider_dispatch', 1],
      ['d-400-continuity_takeover', 'continuity_handoff', 1],
      ['d-500-kill_switch', 'emergency_stop', 1],
      ['d-600-mission_approval_required', 'operational_decision', 1],
      ['d-700-recovery_started', 'recovery_action', 1],
    ]);
    expect(decisions[1]).toEqual({
      version: 3,
      decision_id: 'd-300-decision_tree_eval',
      mission: 'Patrol',
      timestamp_ms: 300,
      decision: 'stop_drive',
      reason: 'lidar.nearest_distance < 0.5m',
      evidence: {
        actions: ['stop_drive', 'sound_horn'],
        condition: 'lidar.nearest_distance < 0.5m',
        'signals.lidar': 0.4,
        tree: 'AisleReflex',
      },
      alternatives_considered: ['switch_to lidar_localization'],
      safety_checks: [{ rule: 'distributed_decision', passed: true }],
      action: 'stop_drive; sound_horn',
      source_event: 'decision_tree_eval',
    });
    expect(decisions[0]).toEqual({
      version: 1,
      decision_id: 'd-150-safety_stop',
      mission: null,
      timestamp_ms: 150,
      decision: 'safety_gate',
      reason: 'synthesized_from_event:safety_stop',
      evidence: { rule: 'stop_if' },
      alternatives_considered: [],
      safety_checks: [],
      action: null,
      source_event: 'safety_stop',
    });
    expect(result.report.chains).toEqual([{ mission: 'Patrol', records: decisions }]);
  });

  it('defaults version 3 and reason trace_payload', () => {
    const result = auditDecisions({ source: 's', frames: [frame(10, 'decision_x', { decision_id: 'a', decision: 'go' })] }, { source: 't' });
    const [record] = result.report.timeline.decisions;
    expect(record?.version).toBe(3);
    expect(record?.reason).toBe('trace_payload');
    expect(record?.evidence).toEqual({});
    expect(record?.action).toBeNull();
  });

  it('writes the explanation text when asked', () => {
    const result = auditDecisions(trace, { source: '/p/patrol.trace', explain: true });
    expect(result.explanation?.split('\n').slice(0, 3)).toEqual([
      'Decision explanations for /p/patrol.trace',
      "At T+150ms the system decided to 'safety_gate' because synthesized_from_event:safety_stop (event: safety_stop).",
      "At T+300ms the system decided to 'stop_drive' because lidar.nearest_distance < 0.5m (event: decision_tree_eval).",
    ]);
    expect(result.explanation?.split('\n')).toHaveLength(8);
  });

  it('has no chains without decisions', () => {
    const result = auditDecisions({ source: 's', frames: [frame(1, 'behavior_tick')] }, { source: 't', explain: true });
    expect(result.report.chains).toEqual([]);
    expect(result.decision_count).toBe(0);
    expect(result.explanation).toBe('Decision explanations for t');
  });

  it('flattens nested evidence into sorted dotted keys', () => {
    expect(flattenEvidence({ z: 1, a: { c: { d: true }, b: [1] }, e: {} })).toEqual({ 'a.b': [1], 'a.c.d': true, e: {}, z: 1 });
    expect(Object.keys(flattenEvidence({ z: 1, a: { c: 2, b: 3 } }))).toEqual(['a.b', 'a.c', 'z']);
  });
});
