import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runProgramCommand } from '../../agent/cli/program-command.js';
import { programCommandFor } from '../../agent/programs/handlers.js';
import { loadSettings } from '../../agent/settings/settings.js';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';
import { sreProject } from './fixture.js';

let a: RunningAgent | null = null;
afterEach(async () => {
  await a?.close();
  a = null;
});

describe('svc readiness FILE --record', () => {
  it('appends the evaluation under the file name; the agent trends it whatever path was typed', async () => {
    const p = sreProject();
    const stateDir = tempDir('svc-sre-record-');
    const settings = loadSettings({ SVC_CONTROL_CENTER_STATE_DIR: stateDir }, p.root);
    const spec = programCommandFor({ id: 'evaluateProgramReadiness' })!;
    const first = await runProgramCommand(spec, ['programs/rover.sd'], new Map([['record', true], ['json', true]]), settings, p.root);
    const report = JSON.parse(first.stdout).report;
    // Typed differently the second time: still one program.
    await runProgramCommand(spec, [path.join(p.root, 'programs', 'rover.sd')], new Map([['record', true]]), settings, p.root);
    // Without --record nothing is appended.
    await runProgramCommand(spec, ['programs/rover.sd'], new Map(), settings, p.root);

    const file = JSON.parse(fs.readFileSync(path.join(stateDir, 'readiness-history.json'), 'utf8'));
    expect(file.version).toBe(1);
    expect(file.entries).toHaveLength(2);
    expect(file.entries[0]).toMatchObject({ program: 'rover.sd', total_score: report.score.total, maximum_score: 100, mission_ready: report.mission_ready });
    expect(Number.isNaN(Date.parse(file.entries[0].recorded_at))).toBe(false);
    expect(file.entries[0].factors.map((f: any) => f.factor)).toEqual(report.score.factors.map((f: any) => f.factor));

    a = await startAgent({ configPath: p.config, programPath: p.program, stateDir, env: { SVC_API_KEYS_FILE: p.keys, SVC_SRE_SAMPLE_INTERVAL_SECS: '0' } });
    const t = (await a.json('/v1/sre/summary')).body.readiness_trends;
    expect(t.sources).toEqual({ recorded_samples: 0, history_file: 2 });
    expect(t.sample_count).toBe(2);
    expect(t.overall_trend).toMatchObject({ factor: 'overall', slope_per_day: 0, volatility: 0, latest_score: report.score.total });
    expect(t.warnings).toEqual(report.score.total < 80 ? [`forecast 7d score ${report.score.total} below policy minimum 80`] : []);
  });
});
