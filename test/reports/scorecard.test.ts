import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type RunningAgent } from '../helpers/agent-harness.js';
import { reportsProject, startReportsAgent } from './fixture.js';

const EXAMPLE = path.resolve(__dirname, '../../examples/standalone/line_follower.sd');
const TIERS = (n: number) => (n >= 90 ? 'excellent' : n >= 75 ? 'good' : n >= 60 ? 'acceptable' : 'needs_attention');

describe('GET /v1/executive/scorecard', () => {
  let bare: RunningAgent;
  let example: RunningAgent;
  beforeAll(async () => {
    bare = await startAgent();
    example = await startAgent({ programPath: EXAMPLE });
  });
  afterAll(async () => {
    await bare.close();
    await example.close();
  });

  it('F30: without a program answers 400 with the serve hint', async () => {
    const r = await bare.json('/v1/executive/scorecard');
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('no program loaded; use control-center serve --program <file.sd>');
    expect(r.body.code).toBe('bad_request');
  });

  it('scores the line_follower example: hand-computed categories, weights and tier agree', async () => {
    const r = await example.json('/v1/executive/scorecard');
    expect(r.status).toBe(200);
    expect(r.body.version).toBe('v1');
    const card = r.body.scorecard;
    expect(card.program).toBe('line_follower.sd');
    const by = Object.fromEntries(card.categories.map((c: any) => [c.name, c]));
    expect(card.categories.map((c: any) => c.name)).toEqual(['readiness', 'safety', 'health', 'security', 'verification', 'assurance', 'resilience']);
    expect(card.categories.map((c: any) => c.weight)).toEqual([20, 20, 15, 15, 10, 10, 10]);
    // Readiness: the example's documented readiness total is 95/100 (examples/standalone/expected).
    expect(by.readiness).toMatchObject({ score: 95, weighted: 19, detail: 'mission_ready=true score 95/100' });
    // Health: no health_check and no health_policy → 60; 60 × 15 / 100 = 9.
    expect(by.health).toMatchObject({ score: 60, weighted: 9, detail: 'checks=0 overall=Unknown' });
    // Resilience: no recovery or continuity policy covers any of the 11 failures → 0 %.
    expect(by.resilience).toMatchObject({ score: 0, weighted: 0, detail: 'recovery coverage 0%' });
    // Threat risk: one deploy (high, 30); no imports, kill switches, network requirement or insecure endpoints.
    expect(by.security.detail).toMatch(/^threat risk 30\/100 composite trust \d+\/100 tier=(trusted|acceptable|low)$/);
    const trust = Number(/composite trust (\d+)/.exec(by.security.detail)![1]);
    expect(by.security.score).toBe(Math.floor((100 - 30 + trust) / 2));
    // Safety: no kill switch is the one critical audit finding; the score is coverage − 20 × 1.
    expect(by.safety.detail).toMatch(/^coverage \d+% audit critical=1 high=0$/);
    const coverage = Number(/coverage (\d+)%/.exec(by.safety.detail)![1]);
    expect(by.safety.score).toBe(Math.max(0, coverage - 20));
    for (const c of card.categories) expect(c.weighted).toBe(Math.floor((c.score * c.weight) / 100));
    expect(card.overall_score).toBe(card.categories.reduce((s: number, c: any) => s + c.weighted, 0));
    expect(card.tier).toBe(TIERS(card.overall_score));
    expect(card.recommendations).toContain('Resolve critical safety audit findings before deploy');
    expect(card.recommendations).toContain('Review `svc threat-model` mitigations');
    expect(card.recommendations).toContain('Improve recovery coverage with `svc recovery-coverage`');
    // Then the first two scenario-coverage recommendations: obstacle avoidance and GPS loss (takeover is third).
    expect(card.recommendations.slice(-2)).toEqual([
      'Add safety { stop_if ... } or lidar proximity rule for obstacle_avoidance',
      'Add recovery_policy on gps_loss with degraded navigation fallback',
    ]);
    expect(card.recommendations).not.toContain('Add continuity_policy with auto_takeover for takeover_failure');
    expect(card.recommendations).not.toContain('Run `svc explain readiness` and resolve blockers');
  });

  it('is deterministic and never writes an integrity baseline', async () => {
    const a = await example.json('/v1/executive/scorecard');
    const b = await example.json('/v1/executive/scorecard');
    expect(a.body).toEqual(b.body);
    const fs = await import('node:fs');
    expect(fs.existsSync(path.join(example.stateDir, 'program_integrity_baselines.json'))).toBe(false);
  });

  it('uses the configuration and registry of a project (fleet program)', async () => {
    const agent = await startReportsAgent(reportsProject({ robots: 2 }));
    try {
      const r = await agent.json('/v1/executive/scorecard');
      expect(r.status).toBe(200);
      const by = Object.fromEntries(r.body.scorecard.categories.map((c: any) => [c.name, c]));
      // One health_check with one check: static checks are Unknown, so 100 − 15 × 0.
      expect(by.health).toMatchObject({ score: 100, detail: 'checks=1 overall=Healthy' });
      // HomeRecovery names gps and battery: 2 of 11 failures covered → 200 / 11 = 18.
      expect(by.resilience.score).toBe(18);
      expect(by.verification.detail).toBe('hardware_compatible=true missions=2');
    } finally {
      await agent.close();
    }
  });
});
