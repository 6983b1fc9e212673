import { useState } from 'preact/hooks';
import { describeError, type Session } from '../api.js';
import { formatTime, useLoad } from '../use-load.js';
import { RawJson, Verdict } from '../components/raw-json.js';

/** `GET /v1/programs/files` (docs/programs.md § Program files). */
interface ProgramFile {
  path: string;
  size_bytes: number;
  modified_ms: number;
  served: boolean;
}

interface Readiness {
  status: string;
  mission_ready: boolean;
  score: { total: number; maximum: number; factors: { factor: string; score: number; weight: number; weighted: number }[] };
  issues: { factor: string; severity: string; message: string; suggested_action: string | null }[];
  target: string | null;
  robots: string[];
}

interface AssureSection {
  passed?: boolean;
  [k: string]: unknown;
}
interface Assure {
  assurance: AssureSection & { cases?: { name: string; evidence?: { source: string; kind: string; status: string }[] }[] };
  issues: unknown[];
  score: number;
  passed: boolean;
  [section: string]: unknown;
}

interface HardwareItem {
  category: string;
  message: string;
  severity: string;
  line: number;
  column: number;
}
interface Hardware {
  compatible: boolean;
  target: string | null;
  items: HardwareItem[];
}
interface Capabilities {
  capabilities: { robot: string; rows: { capability: string; source: string; status: string; notes: string }[] }[];
  health: { overall: string; checks: { name: string; target: string; metric: string; status: string; message: string }[] } | null;
}

/** `result.path` of an executed simulation (docs/program-language.md §16). */
interface PathPoint {
  sim_time_ms: number;
  x: number;
  y: number;
  theta: number;
}
interface Simulation {
  event_count: number;
  log_count: number;
  result: {
    state: { pose: { x: number; y: number; theta: number }; velocity: { linear: number; angular: number }; emergency_stop: boolean };
    metrics: {
      tasks?: Record<string, { deadline_misses?: number; budget_violations?: number; jitter_violations?: number }>;
      topics?: Record<string, { deadline_misses?: number }>;
      scheduler?: { emergency_stops?: number };
      execution?: { loop_iterations?: number; sim_time_ms?: number; robots?: number; behaviors_run?: number; tasks_run?: number };
    };
    mission_trace: { mission: string; steps: string[]; status: string } | null;
    path?: PathPoint[];
  };
}

/** The assurance report's sections, in the order docs/program-language.md §10 lists them. */
const ASSURE_SECTIONS = ['assurance', 'anomalies', 'prognostics', 'resilience', 'mission', 'state', 'recovery'] as const;

/**
 * Programs (docs/panel.md § Views): the project's `.sd` files, the picked one's source, its
 * readiness, assurance and verification reports, and an executed simulation with the robot's path.
 * Every call is an open or sensitive read: any signed-in principal may use the whole view.
 */
export function Programs({ session }: { session: Session }) {
  const c = session.client;
  const files = useLoad(async () => ((await c.listProgramFiles()) as { files: ProgramFile[] }).files);
  const [picked, setPicked] = useState<string | null>(null);
  const list = files.data ?? [];
  const current = picked ?? list.find((f) => f.served)?.path ?? list[0]?.path ?? null;

  return (
    <section class="view" data-view="programs">
      <h2>Programs</h2>
      <div class="split">
        <div class="card">
          <h3>Program files</h3>
          {files.error && <p class="error">{files.error}</p>}
          {files.data && list.length === 0 && <p class="muted">No .sd files under the project root.</p>}
          {list.length > 0 && (
            <table data-testid="program-files">
              <thead>
                <tr>
                  <th>File</th>
                  <th>Size</th>
                  <th>Modified</th>
                </tr>
              </thead>
              <tbody>
                {list.map((f) => (
                  <tr key={f.path} data-file={f.path} class={`pick ${f.path === current ? 'selected' : ''}`} onClick={() => setPicked(f.path)}>
                    <td>
                      {f.path} {f.served && <span class="badge">served</span>}
                    </td>
                    <td>{f.size_bytes} B</td>
                    <td>{formatTime(f.modified_ms)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </div>
        {current && <Source key={current} session={session} file={current} />}
      </div>
      {current && <ProgramReports key={current} session={session} file={current} />}
    </section>
  );
}

function Source({ session, file }: { session: Session; file: string }) {
  const source = useLoad(async () => ((await session.client.getProgramSource({ file })) as { source: string }).source);
  return (
    <div class="card">
      <h3>
        Source · <span data-testid="picked-file">{file}</span>
      </h3>
      {source.error && <p class="error">{source.error}</p>}
      {source.data !== null && (
        <pre class="source" data-testid="program-source">
          {source.data}
        </pre>
      )}
    </div>
  );
}

function ProgramReports({ session, file }: { session: Session; file: string }) {
  const c = session.client;
  const readiness = useLoad(async () => ((await c.evaluateProgramReadiness({ file })) as { report: Readiness }).report);
  const assure = useLoad(async () => ((await c.evaluateProgramAssure({ file })) as { report: Assure }).report);
  const hardware = useLoad(async () => ((await c.verifyProgramHardware({ file })) as { report: Hardware }).report);
  const capabilities = useLoad(() => c.verifyProgramCapabilities({ file }) as Promise<Capabilities>);
  return (
    <>
      <div class="cards">
        <div class="card" data-testid="readiness">
          <h3>Readiness</h3>
          {readiness.error && <p class="error">{readiness.error}</p>}
          {readiness.data && <ReadinessReport r={readiness.data} />}
        </div>
        <div class="card" data-testid="assure">
          <h3>Assurance</h3>
          {assure.error && <p class="error">{assure.error}</p>}
          {assure.data && <AssureReport a={assure.data} />}
        </div>
        <div class="card" data-testid="verify">
          <h3>Verification</h3>
          {hardware.error && <p class="error">{hardware.error}</p>}
          {hardware.data && <HardwareReport h={hardware.data} />}
          {capabilities.error && <p class="error">{capabilities.error}</p>}
          {capabilities.data && <CapabilitiesReport caps={capabilities.data} />}
        </div>
      </div>
      <SimulationCard session={session} file={file} />
    </>
  );
}

function ReadinessReport({ r }: { r: Readiness }) {
  return (
    <>
      <dl>
        <dt>Mission Ready</dt>
        <dd>
          <Verdict ok={r.mission_ready} yes="YES" no="NO" testid="mission-ready" />
        </dd>
        <dt>Score</dt>
        <dd data-testid="readiness-score">
          {r.score.total}/{r.score.maximum}
        </dd>
        <dt>Status</dt>
        <dd>
          <span class={`status status-${r.status.toLowerCase()}`} data-testid="readiness-status">
            {r.status}
          </span>
        </dd>
        <dt>Target</dt>
        <dd>{r.target ?? '—'}</dd>
        <dt>Robots</dt>
        <dd>{r.robots.join(', ') || '—'}</dd>
      </dl>
      <h4>Issues</h4>
      {r.issues.length === 0 ? (
        <p class="muted">No issues.</p>
      ) : (
        <ul class="issues" data-testid="readiness-issues">
          {r.issues.map((i, n) => (
            <li key={n}>
              <span class={`sev sev-${i.severity.toLowerCase()}`}>{i.severity}</span> <strong>{i.factor}</strong>: {i.message}
              {i.suggested_action && <div class="muted">→ {i.suggested_action}</div>}
            </li>
          ))}
        </ul>
      )}
      <details>
        <summary>Factors ({r.score.factors.length})</summary>
        <table class="compact">
          <thead>
            <tr>
              <th>Factor</th>
              <th>Score</th>
              <th>Weight</th>
              <th>Weighted</th>
            </tr>
          </thead>
          <tbody>
            {r.score.factors.map((f) => (
              <tr key={f.factor}>
                <td>{f.factor}</td>
                <td>{f.score}</td>
                <td>{f.weight}</td>
                <td>{f.weighted}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
      <RawJson value={r} />
    </>
  );
}

function AssureReport({ a }: { a: Assure }) {
  const cases = a.assurance.cases ?? [];
  return (
    <>
      <dl>
        <dt>Verdict</dt>
        <dd>
          <Verdict ok={a.passed} testid="assure-verdict" />
        </dd>
        <dt>Score</dt>
        <dd data-testid="assure-score">{a.score}</dd>
        <dt>Issues</dt>
        <dd>{a.issues.length}</dd>
      </dl>
      <table class="compact" data-testid="assure-sections">
        <thead>
          <tr>
            <th>Section</th>
            <th>Result</th>
          </tr>
        </thead>
        <tbody>
          {ASSURE_SECTIONS.filter((s) => a[s] && typeof a[s] === 'object').map((s) => (
            <tr key={s} data-section={s}>
              <td>{s}</td>
              <td>
                <Verdict ok={(a[s] as AssureSection).passed !== false} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {cases.length > 0 && (
        <>
          <h4>Assurance cases</h4>
          <ul class="issues" data-testid="assure-cases">
            {cases.map((k) => (
              <li key={k.name}>
                <strong>{k.name}</strong>: {(k.evidence ?? []).filter((e) => e.status === 'linked').length}/{(k.evidence ?? []).length} evidence linked
                <span class="muted"> ({(k.evidence ?? []).map((e) => e.kind).join(', ')})</span>
              </li>
            ))}
          </ul>
        </>
      )}
      {a.issues.length > 0 && (
        <ul class="issues">
          {a.issues.map((i, n) => (
            <li key={n}>{typeof i === 'string' ? i : JSON.stringify(i)}</li>
          ))}
        </ul>
      )}
      <RawJson value={a} />
    </>
  );
}

function HardwareReport({ h }: { h: Hardware }) {
  const problems = h.items.filter((i) => i.severity !== 'pass');
  return (
    <>
      <dl>
        <dt>Hardware</dt>
        <dd>
          <Verdict ok={h.compatible} yes="Compatible" no="Not compatible" testid="verify-compatible" />
        </dd>
        <dt>Target</dt>
        <dd>{h.target ?? '—'}</dd>
        <dt>Checks</dt>
        <dd data-testid="verify-checks">
          {h.items.length - problems.length} of {h.items.length} pass
        </dd>
      </dl>
      {problems.length > 0 && (
        <ul class="issues" data-testid="verify-reasons">
          {problems.map((i, n) => (
            <li key={n}>
              <span class={`sev sev-${i.severity.toLowerCase()}`}>{i.severity}</span> {i.category}: {i.message}
              {i.line > 0 && <span class="muted"> (line {i.line})</span>}
            </li>
          ))}
        </ul>
      )}
      <details>
        <summary>All checks ({h.items.length})</summary>
        <table class="compact">
          <tbody>
            {h.items.map((i, n) => (
              <tr key={n}>
                <td>{i.severity}</td>
                <td>{i.category}</td>
                <td class="wrap">{i.message}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
      <RawJson value={h} label="Raw JSON (hardware)" />
    </>
  );
}

function CapabilitiesReport({ caps }: { caps: Capabilities }) {
  return (
    <>
      <h4>Capabilities</h4>
      {caps.capabilities.map((robot) => (
        <table class="compact" key={robot.robot} data-testid="capabilities" data-robot={robot.robot}>
          <thead>
            <tr>
              <th>{robot.robot}</th>
              <th>Status</th>
              <th>Notes</th>
            </tr>
          </thead>
          <tbody>
            {robot.rows.map((row) => (
              <tr key={row.capability}>
                <td>{row.capability}</td>
                <td>
                  <Verdict ok={row.status === 'PASS'} yes={row.status} no={row.status} />
                </td>
                <td class="wrap">{row.notes}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ))}
      {caps.health && <p class="muted">Static health: {caps.health.overall} ({caps.health.checks.length} checks)</p>}
      <RawJson value={caps} label="Raw JSON (capabilities)" />
    </>
  );
}

function sum(values: Iterable<number | undefined>): number {
  let n = 0;
  for (const v of values) n += v ?? 0;
  return n;
}

function SimulationCard({ session, file }: { session: Session; file: string }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [sim, setSim] = useState<Simulation | null>(null);
  const run = async () => {
    setBusy(true);
    setError(null);
    try {
      setSim(((await session.client.runProgramSimulation({ file, execute: true })) as { simulation: Simulation }).simulation);
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };
  const m = sim?.result.metrics;
  const pose = sim?.result.state.pose;
  const timing = m
    ? sum(Object.values(m.tasks ?? {}).map((t) => sum([t.deadline_misses, t.budget_violations, t.jitter_violations]))) +
      sum(Object.values(m.topics ?? {}).map((t) => t.deadline_misses))
    : 0;
  return (
    <div class="card" data-testid="simulation">
      <h3>Simulation</h3>
      <p class="muted">Runs the program on the simulated robot (20 loop iterations, simulated time; nothing is recorded).</p>
      <button onClick={run} disabled={busy} data-testid="run-simulation">
        {busy ? 'Running…' : sim ? 'Run again' : 'Run simulation'}
      </button>
      {error && <p class="error" role="alert">{error}</p>}
      {sim && m && pose && (
        <div class="split sim">
          <Trajectory path={sim.result.path ?? []} />
          <dl data-testid="simulation-metrics">
            <dt>Steps</dt>
            <dd data-testid="sim-steps">{m.execution?.loop_iterations ?? 0} loop iterations, {sim.event_count} events</dd>
            <dt>Simulated time</dt>
            <dd>{((m.execution?.sim_time_ms ?? 0) / 1000).toFixed(1)} s</dd>
            <dt>Emergency stops</dt>
            <dd data-testid="sim-estops">{m.scheduler?.emergency_stops ?? 0}{sim.result.state.emergency_stop ? ' (stopped at the end)' : ''}</dd>
            <dt>Deadline / budget violations</dt>
            <dd data-testid="sim-violations">{timing}</dd>
            <dt>Final pose</dt>
            <dd data-testid="sim-final-pose">
              x {pose.x.toFixed(2)} m, y {pose.y.toFixed(2)} m, θ {pose.theta.toFixed(2)} rad
            </dd>
            <dt>Mission</dt>
            <dd>{sim.result.mission_trace ? `${sim.result.mission_trace.mission}: ${sim.result.mission_trace.status} (${sim.result.mission_trace.steps.join(' → ')})` : '—'}</dd>
          </dl>
        </div>
      )}
      {sim && <RawJson value={sim} />}
    </div>
  );
}

const W = 480;
const H = 320;
const PAD = 24;

/**
 * The robot's x/y path as an SVG polyline, same scale on both axes (a straight drive must look
 * straight), at least a metre across so sub-centimetre drift is not blown up into a zigzag.
 */
function Trajectory({ path }: { path: PathPoint[] }) {
  if (path.length === 0) return <p class="muted">No pose was recorded.</p>;
  const xs = path.map((p) => p.x);
  const ys = path.map((p) => p.y);
  const [minX, maxX, minY, maxY] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
  const span = Math.max(maxX - minX, maxY - minY, 1);
  const scale = Math.min(W - 2 * PAD, H - 2 * PAD) / span;
  const cx = (minX + maxX) / 2;
  const cy = (minY + maxY) / 2;
  const px = (x: number) => W / 2 + (x - cx) * scale;
  const py = (y: number) => H / 2 - (y - cy) * scale; // y grows upwards on the floor, downwards in SVG
  const points = path.map((p) => `${px(p.x).toFixed(1)},${py(p.y).toFixed(1)}`).join(' ');
  const first = path[0]!;
  const last = path[path.length - 1]!;
  return (
    <figure class="trajectory">
      <svg viewBox={`0 0 ${W} ${H}`} width={W} height={H} data-testid="trajectory" data-points={path.length} role="img" aria-label="Simulated trajectory">
        <rect x="0" y="0" width={W} height={H} class="traj-bg" />
        <polyline points={points} class="traj-line" />
        <circle cx={px(first.x)} cy={py(first.y)} r="5" class="traj-start" />
        <circle cx={px(last.x)} cy={py(last.y)} r="5" class="traj-end" />
        <line
          x1={px(last.x)}
          y1={py(last.y)}
          x2={px(last.x) + Math.cos(last.theta) * 18}
          y2={py(last.y) - Math.sin(last.theta) * 18}
          class="traj-heading"
        />
        <line x1={PAD} y1={H - PAD / 2} x2={PAD + scale} y2={H - PAD / 2} class="traj-scale" />
        <text x={PAD} y={H - PAD / 2 - 4} class="traj-label">
          1 m
        </text>
      </svg>
      <figcaption class="muted">
        {path.length} poses · x {minX.toFixed(2)}…{maxX.toFixed(2)} m · y {minY.toFixed(2)}…{maxY.toFixed(2)} m · start ● green, end ● red with heading
      </figcaption>
    </figure>
  );
}
