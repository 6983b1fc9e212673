import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../../agent/core/errors.js';
import { cliWorkspace } from '../../../agent/cli/program-command.js';
import { ProgramEngine } from '../../../agent/programs/program-engine.js';
import { tempDir } from '../../helpers/agent-harness.js';
import { loadSettings } from '../../../agent/settings/settings.js';

/**
 * Our example programs (examples/) against their checked-in expected outputs. Each program's
 * `expected/<name>.json` holds what every program operation answers for it; regenerate after an
 * intended change with `npm run examples:expected` and review the diff.
 */
const REPO = path.resolve(__dirname, '../../..');
const EXAMPLES = path.join(REPO, 'examples');
const UPDATE = process.env['UPDATE_EXPECTED'] === '1';

function programsUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory() && entry.name !== 'invalid' && entry.name !== 'expected') out.push(...programsUnder(p));
    else if (entry.isFile() && entry.name.endsWith('.sd')) out.push(p);
  }
  return out.sort();
}

/** Wall-clock task timings are the one non-deterministic output (docs/program-language.md §28). */
const VOLATILE_KEYS = new Set(['last_duration_ms', 'max_duration_ms']);

/** Machine-specific directories become placeholders, so expected files hold no temp paths. */
function normalise(value: unknown, dirs: Record<string, string>): unknown {
  if (typeof value === 'string') return Object.entries(dirs).reduce((s, [dir, name]) => s.split(dir).join(name), value);
  if (Array.isArray(value)) return value.map((v) => normalise(v, dirs));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).filter(([k]) => !VOLATILE_KEYS.has(k)).map(([k, v]) => [k, normalise(v, dirs)]));
  }
  return value;
}

async function outcome(run: () => unknown): Promise<unknown> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof ApiError) return { error: { status: err.status, message: err.message } };
    throw err;
  }
}

/** Every operation's answer for one program, in a fixed order. */
async function outputsFor(file: string, root: string): Promise<Record<string, unknown>> {
  const workspace = { ...cliWorkspace(file, undefined, root, loadSettings({}, root)), stateDir: tempDir('svc-example-state-') };
  const engine = new ProgramEngine(workspace);
  const req = { file };
  const out: Record<string, unknown> = {
    readiness: await outcome(() => engine.readiness(req)),
    verify_hardware: await outcome(() => engine.verifyHardware(req)),
    verify_hardware_all_targets: await outcome(() => engine.verifyHardware({ ...req, all_targets: true })),
    verify_capabilities: await outcome(() => engine.verifyCapabilities({ ...req, traceability: true })),
    verify_mission: await outcome(() => engine.verifyMission(req)),
    contract_verify: await outcome(() => engine.contractVerify(req)),
    assure: await outcome(() => engine.assure(req)),
    diagnose: await outcome(() => engine.diagnose(req)),
    heal: await outcome(() => engine.heal(req)),
    trust: await outcome(() => engine.trust(req)),
    explain: await outcome(() => engine.explain(req)),
    simulation: await outcome(() => engine.simulate({ ...req, execute: true, decision_trace: true })),
  };
  return normalise(out, { [workspace.stateDir]: '<state>', [root]: '<examples>' }) as Record<string, unknown>;
}

const workRoot = tempDir('svc-examples-');
fs.cpSync(EXAMPLES, workRoot, { recursive: true });
const programs = programsUnder(workRoot);

afterAll(() => fs.rmSync(workRoot, { recursive: true, force: true }));

describe('example programs', () => {
  it('there are at least 15 of them, in several projects', () => {
    expect(programs.length).toBeGreaterThanOrEqual(15);
    const manifests = new Set(programs.map((p) => cliWorkspace(p, undefined, workRoot, loadSettings({}, workRoot)).config?.manifestPath ?? null));
    expect([...manifests].filter(Boolean).length).toBeGreaterThanOrEqual(3);
  });

  for (const program of programs) {
    const rel = path.relative(workRoot, program);
    it(`${rel} matches its expected outputs`, async () => {
      const expectedFile = path.join(path.dirname(program), 'expected', `${path.basename(program, '.sd')}.json`);
      const repoExpected = path.join(EXAMPLES, path.relative(workRoot, expectedFile));
      const actual = await outputsFor(program, workRoot);
      if (UPDATE) {
        fs.mkdirSync(path.dirname(repoExpected), { recursive: true });
        fs.writeFileSync(repoExpected, `${JSON.stringify(actual, null, 2)}\n`);
      }
      expect(fs.existsSync(repoExpected), `${repoExpected} is missing: run npm run examples:expected`).toBe(true);
      expect(actual).toEqual(JSON.parse(fs.readFileSync(repoExpected, 'utf8')));
    });
  }

  it('a recorded simulation of every runnable example replays deterministically', async () => {
    let replayed = 0;
    for (const program of programs) {
      const workspace = { ...cliWorkspace(program, undefined, workRoot, loadSettings({}, workRoot)), stateDir: tempDir('svc-example-state-') };
      const engine = new ProgramEngine(workspace);
      const sim = await outcome(() => engine.simulate({ file: program, execute: true, record_trace: true }));
      if ((sim as { error?: unknown }).error) continue;
      const tracePath = (sim as { simulation: { trace_path: string } }).simulation.trace_path;
      expect(tracePath).toBe(program.replace(/\.sd$/, '.trace'));
      const replay = engine.replay({ file: tracePath, deterministic: true }) as { replay: { verification: { ok: boolean; mismatches: unknown[] } } };
      expect(replay.replay.verification, program).toMatchObject({ ok: true, mismatches: [] });
      replayed++;
    }
    expect(replayed).toBeGreaterThanOrEqual(10);
  });
});
