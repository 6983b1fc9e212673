import { useState } from 'preact/hooks';
import { can, describeError, type Session } from '../api.js';
import { formatTime, useLoad } from '../use-load.js';
import type { ActiveRollout, RolloutResult, RolloutStep } from '../../../api/domains/ota.js';

interface OtaStatus {
  state: { current_version: Record<string, string>; previous_version: Record<string, string>; history: RolloutResult[] };
  rollout: ActiveRollout | null;
}

interface PlanAnswer {
  rollout: RolloutResult;
  program?: string;
  require_certify?: boolean;
  certification_proof?: { summary?: string; passed?: boolean; passed_strict?: boolean } | null;
}

const STRATEGIES = [
  { id: 'canary', label: 'Canary' },
  { id: 'staged', label: 'Staged' },
  { id: 'blue_green', label: 'Blue/green' },
  { id: 'all', label: 'All at once' },
] as const;

/** Steps that have reached an end state in a batch (the rest are pending or moving). */
const DONE = new Set(['deployed', 'failed', 'rolled_back', 'skipped', 'interrupted']);

const stepKey = (s: RolloutStep) => s.target ?? (s.device_id ? `device:${s.device_id}` : `${s.robot_name}@${s.hardware}`);

/**
 * One batch: its targets, the state of each, its gate, and a progress bar split by outcome
 * (deployed / failed or rolled back / moving / waiting). A batch "passes" when
 * deployed / targets ≥ success_threshold (docs/operations.md § Strategies, step 3).
 */
function BatchCard({ rollout, index, planned }: { rollout: RolloutResult; index: number; planned: boolean }) {
  const meta = rollout.batches?.find((b) => b.index === index);
  const steps = rollout.steps.filter((s) => s.batch === index);
  const n = steps.length || 1;
  const count = (pred: (s: RolloutStep) => boolean) => steps.filter(pred).length;
  const deployed = count((s) => s.status === 'deployed');
  const bad = count((s) => s.status === 'failed' || s.status === 'rolled_back' || s.status === 'interrupted');
  const moving = count((s) => s.status === 'in_progress' || s.status === 'updated');
  const skipped = count((s) => s.status === 'skipped');
  const threshold = rollout.success_threshold ?? 1;
  const finished = steps.length > 0 && steps.every((s) => DONE.has(s.status));
  const passed = finished && deployed / n >= threshold;
  const failedHere = steps.some((s) => s.status === 'failed' || s.status === 'interrupted');
  // A batch that passed but was undone by a later batch's failure reads "rolled back", not "halted".
  const verdict = planned
    ? 'planned'
    : !finished
      ? moving > 0
        ? 'running'
        : 'waiting'
      : passed
        ? 'passed'
        : failedHere
          ? 'halted'
          : steps.some((s) => s.status === 'rolled_back')
            ? 'rolled_back'
            : skipped === steps.length
              ? 'skipped'
              : 'halted';
  return (
    <div class="batch" data-batch={index} data-verdict={verdict}>
      <div class="batch-head">
        <strong>Batch {index}</strong>
        <span class="muted">
          {meta ? `${meta.phase_percent} %` : ''} · {steps.length} target{steps.length === 1 ? '' : 's'} · gate ≥ {Math.round(threshold * 100)} % deployed
          {meta?.condition ? ` · ${meta.condition}` : ''}
        </span>
        <span class={`pill pill-${verdict}`}>{verdict.replace('_', ' ')}</span>
      </div>
      {!planned && (
        <>
          <div class="progress" title={`${deployed} deployed, ${bad} failed, ${moving} in progress of ${steps.length}`}>
            <span class="bar-ok" style={{ width: `${(deployed / n) * 100}%` }} />
            <span class="bar-bad" style={{ width: `${(bad / n) * 100}%` }} />
            <span class="bar-moving" style={{ width: `${(moving / n) * 100}%` }} />
          </div>
          <p class="muted small" data-testid="batch-progress">
            {deployed}/{steps.length} deployed{bad ? `, ${bad} failed or rolled back` : ''}
            {moving ? `, ${moving} in progress` : ''}
          </p>
        </>
      )}
      <table class="steps">
        <thead>
          <tr>
            <th>Target</th>
            <th>State</th>
            <th>Version</th>
            <th>Readiness</th>
            <th>Took</th>
            <th>Detail</th>
          </tr>
        </thead>
        <tbody>
          {steps.map((s) => (
            <tr key={stepKey(s)} data-target={stepKey(s)}>
              <td>{stepKey(s)}</td>
              <td>
                <span class={`step step-${s.status}`} data-testid="step-status">
                  {s.status}
                </span>
              </td>
              <td>{s.version}</td>
              <td>{s.readiness ? (s.readiness.ready ? 'ready' : `not ready: ${s.readiness.detail}`) : '—'}</td>
              <td>{typeof s.duration_ms === 'number' ? `${s.duration_ms} ms` : '—'}</td>
              <td class="wrap">{s.detail ?? ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Every batch of a rollout, then the targets no batch reaches (skipped by the strategy). */
function Batches({ rollout, planned = false }: { rollout: RolloutResult; planned?: boolean }) {
  const indexes = rollout.batches?.map((b) => b.index) ?? [...new Set(rollout.steps.map((s) => s.batch).filter((b): b is number => typeof b === 'number'))];
  const outside = rollout.steps.filter((s) => s.batch === null || s.batch === undefined);
  return (
    <div data-testid="batches">
      {indexes.map((i) => (
        <BatchCard key={i} rollout={rollout} index={i} planned={planned} />
      ))}
      {outside.length > 0 && (
        <p class="muted small">
          Outside every batch (the strategy leaves them on their version): {outside.map(stepKey).join(', ')}
        </p>
      )}
    </div>
  );
}

interface Form {
  version: string;
  strategy: string;
  canaryPercent: string;
  canaryPromote: boolean;
  phases: string;
  threshold: string;
  budget: string;
  rollback: boolean;
  targets: string;
}

const INITIAL: Form = { version: '', strategy: 'canary', canaryPercent: '25', canaryPromote: true, phases: '10, 50, 100', threshold: '100', budget: '', rollback: true, targets: '' };

/** The body of plan and execute from the form (docs/operations.md § Strategies: the fields and their defaults). */
function bodyOf(f: Form): { body: Record<string, unknown> } | { error: string } {
  if (!f.version.trim()) return { error: 'A version is required.' };
  const body: Record<string, unknown> = { strategy: f.strategy, version: f.version.trim(), rollback_on_readiness_fail: f.rollback };
  if (f.strategy === 'canary') {
    const p = Number(f.canaryPercent);
    if (!Number.isInteger(p) || p < 1 || p > 100) return { error: 'Canary percent must be a whole number from 1 to 100.' };
    body['canary_percent'] = p;
    body['canary_promote'] = f.canaryPromote;
  }
  if (f.strategy === 'staged') {
    const phases = f.phases.split(/[\s,]+/).filter(Boolean).map(Number);
    if (phases.length === 0 || phases.some((p) => !Number.isInteger(p) || p < 1 || p > 100)) return { error: 'Phases are whole percentages from 1 to 100, e.g. "10, 50, 100".' };
    body['phases'] = phases;
  }
  const t = Number(f.threshold);
  if (!(t >= 0 && t <= 100)) return { error: 'The success threshold is a percentage from 0 to 100.' };
  body['success_threshold'] = t / 100;
  if (f.budget.trim()) {
    const b = Number(f.budget);
    if (!Number.isInteger(b) || b < 1) return { error: 'The disruption budget is a whole number of targets (1 or more), or empty for no bound.' };
    body['disruption_budget'] = b;
  }
  const lines = f.targets.split(/[\n,]+/).map((l) => l.trim()).filter(Boolean);
  if (lines.length) {
    const assignments = [];
    for (const l of lines) {
      const m = /^([^@\s]+)@([^@\s]+)$/.exec(l);
      if (!m) return { error: `Target "${l}" is not robot@hardware.` };
      assignments.push({ robot_name: m[1], hardware: m[2] });
    }
    body['assignments'] = assignments;
  }
  return { body };
}

/** Plan, confirm and execute a rollout: needs Deploy (the view hides this card otherwise). */
function NewRollout({ session, onStarted, onFinished, busy }: { session: Session; onStarted: () => void; onFinished: () => void; busy: boolean }) {
  const c = session.client;
  const [form, setForm] = useState<Form>(INITIAL);
  const [plan, setPlan] = useState<PlanAnswer | null>(null);
  const [confirming, setConfirming] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [result, setResult] = useState<string | null>(null);
  const set = (patch: Partial<Form>) => {
    // Any change makes the shown plan stale: execute only what was planned and confirmed.
    setForm({ ...form, ...patch });
    setPlan(null);
    setConfirming(false);
  };
  const built = bodyOf(form);

  const doPlan = async () => {
    setError(null);
    setResult(null);
    if ('error' in built) return setError(built.error);
    try {
      setPlan((await c.planOta(built.body as never)) as PlanAnswer);
    } catch (err) {
      setError(describeError(err));
    }
  };

  const doExecute = async () => {
    if ('error' in built) return;
    setConfirming(false);
    setError(null);
    setResult(null);
    onStarted();
    try {
      const r = (await c.executeOta(built.body as never)) as { rollout_id: string; rollout: RolloutResult; halted: boolean; halt_reason: string | null; duration_ms: number };
      setResult(`${r.rollout_id}: ${r.rollout.success ? 'succeeded' : 'failed'} in ${r.duration_ms} ms${r.halted ? ` (halted: ${r.halt_reason})` : ''}`);
      setPlan(null);
    } catch (err) {
      setError(describeError(err));
    }
    onFinished();
  };

  const inBatches = plan ? plan.rollout.steps.filter((s) => typeof s.batch === 'number').length : 0;
  return (
    <div class="card" data-testid="new-rollout">
      <h3>New rollout</h3>
      <div class="form-grid">
        <label>
          Version
          <input name="version" value={form.version} onInput={(e) => set({ version: e.currentTarget.value })} placeholder="e.g. 2026.11.2" />
        </label>
        <label>
          Strategy
          <select name="strategy" value={form.strategy} onChange={(e) => set({ strategy: e.currentTarget.value })}>
            {STRATEGIES.map((s) => (
              <option key={s.id} value={s.id}>
                {s.label}
              </option>
            ))}
          </select>
        </label>
        {form.strategy === 'canary' && (
          <label>
            Canary percent
            <input name="canary_percent" type="number" min={1} max={100} value={form.canaryPercent} onInput={(e) => set({ canaryPercent: e.currentTarget.value })} />
          </label>
        )}
        {form.strategy === 'canary' && (
          <label class="check">
            <input name="canary_promote" type="checkbox" checked={form.canaryPromote} onChange={(e) => set({ canaryPromote: e.currentTarget.checked })} /> Promote to the rest after the canary passes
          </label>
        )}
        {form.strategy === 'staged' && (
          <label>
            Phases (cumulative %)
            <input name="phases" value={form.phases} onInput={(e) => set({ phases: e.currentTarget.value })} />
          </label>
        )}
        {form.strategy === 'blue_green' && <p class="muted small">Green half updated and checked, then traffic switches; the blue half stays on the previous version as the standby.</p>}
        <label>
          Success threshold (% of a batch deployed)
          <input name="success_threshold" type="number" min={0} max={100} value={form.threshold} onInput={(e) => set({ threshold: e.currentTarget.value })} />
        </label>
        <label>
          Disruption budget (targets at once; empty: no bound)
          <input name="disruption_budget" type="number" min={1} value={form.budget} onInput={(e) => set({ budget: e.currentTarget.value })} />
        </label>
        <label class="check">
          <input name="rollback" type="checkbox" checked={form.rollback} onChange={(e) => set({ rollback: e.currentTarget.checked })} /> Roll back every updated target when a batch fails
        </label>
        <label class="wide">
          Targets (robot@hardware, one a line; empty: the program's deploy declarations)
          <textarea name="targets" rows={4} value={form.targets} onInput={(e) => set({ targets: e.currentTarget.value })} />
        </label>
      </div>
      <div class="actions">
        <button onClick={doPlan} disabled={busy}>
          Plan
        </button>
        {plan && !confirming && (
          <button onClick={() => setConfirming(true)} disabled={busy || inBatches === 0}>
            Execute…
          </button>
        )}
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {result && <p data-testid="execute-result">{result}</p>}
      {plan && confirming && (
        <div class="confirm" data-testid="confirm-execute">
          <p>
            Execute <strong>{form.version}</strong> ({form.strategy}) on {inBatches} target{inBatches === 1 ? '' : 's'} in {plan.rollout.batches?.length ?? 0} batch
            {plan.rollout.batches?.length === 1 ? '' : 'es'}? The targets are contacted and updated now.
          </p>
          <div class="actions">
            <button onClick={doExecute}>Confirm execute</button>
            <button class="secondary" onClick={() => setConfirming(false)}>
              Cancel
            </button>
          </div>
        </div>
      )}
      {plan && (
        <div data-testid="plan">
          <h3 class="sub">Plan</h3>
          <p class="muted small">
            Program {plan.program ?? '—'}; phases {plan.rollout.phases.join(' → ')} %
            {plan.certification_proof?.summary ? `; certification: ${plan.certification_proof.summary}` : ''}
            {plan.require_certify ? ' (gate on)' : ''}
          </p>
          <Batches rollout={plan.rollout} planned />
        </div>
      )}
    </div>
  );
}

/**
 * Rollouts (docs/panel.md § Views; docs/operations.md § Rollouts): the current or last rollout with
 * progress per batch, deployed versions, past rollouts, and plan/execute for Deploy principals.
 * While a rollout runs the status is polled every second, so the batches move.
 */
export function Rollouts({ session }: { session: Session }) {
  const c = session.client;
  const [executing, setExecuting] = useState(false);
  const [pollFast, setPollFast] = useState(false);
  const status = useLoad(async () => {
    const s = (await c.getOtaStatus()) as OtaStatus;
    setPollFast(s.rollout?.status === 'running');
    return s;
  }, executing || pollFast ? 1_000 : 10_000);
  const deploy = can(session, 'Deploy');
  const active = status.data?.rollout ?? null;
  const history = status.data ? [...status.data.state.history].reverse() : [];
  const versions = status.data ? Object.entries(status.data.state.current_version).sort(([a], [b]) => a.localeCompare(b)) : [];

  return (
    <section class="view" data-view="rollouts">
      <h2>Rollouts</h2>
      {status.error && <p class="error">{status.error}</p>}
      <div class="card" data-testid="current-rollout">
        <h3>{active?.status === 'running' ? 'Running rollout' : 'Last rollout'}</h3>
        {status.data && !active && <p class="muted">No rollout has run on this agent.</p>}
        {active && (
          <>
            <dl class="inline">
              <dt>Id</dt>
              <dd data-testid="rollout-id">{active.id}</dd>
              <dt>Status</dt>
              <dd>
                <span class={`pill pill-${active.status}`} data-testid="rollout-status">
                  {active.status}
                </span>
              </dd>
              <dt>Version</dt>
              <dd>
                {active.rollout.version} ({active.rollout.strategy}, {active.kind})
              </dd>
              <dt>Progress</dt>
              <dd data-testid="rollout-progress">
                {active.completed_steps}/{active.rollout.steps.filter((s) => typeof s.batch === 'number').length} steps
              </dd>
              <dt>Started</dt>
              <dd>{formatTime(active.started_at_ms)}</dd>
              <dt>Finished</dt>
              <dd>{formatTime(active.finished_at_ms)}</dd>
              {active.halt_reason && (
                <>
                  <dt>Halted</dt>
                  <dd class="error">{active.halt_reason}</dd>
                </>
              )}
            </dl>
            <Batches rollout={active.rollout} />
          </>
        )}
      </div>
      {deploy ? (
        <NewRollout session={session} busy={executing || active?.status === 'running'} onStarted={() => (setExecuting(true), status.reload())} onFinished={() => (setExecuting(false), status.reload())} />
      ) : (
        <p class="muted card">Planning and executing rollouts need the Deploy permission; the {session.role} role does not have it.</p>
      )}
      <div class="cards">
        <div class="card">
          <h3>Deployed versions</h3>
          {versions.length === 0 ? (
            <p class="muted">No target has taken a rollout yet.</p>
          ) : (
            <table data-testid="versions">
              <thead>
                <tr>
                  <th>Target</th>
                  <th>Current</th>
                  <th>Previous</th>
                </tr>
              </thead>
              <tbody>
                {versions.map(([t, v]) => (
                  <tr key={t}>
                    <td>{t}</td>
                    <td>{v}</td>
                    <td>{status.data?.state.previous_version[t] ?? '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </div>
        <div class="card">
          <h3>Past rollouts (succeeded)</h3>
          {history.length === 0 ? (
            <p class="muted">None yet.</p>
          ) : (
            <table data-testid="history">
              <thead>
                <tr>
                  <th>Version</th>
                  <th>Strategy</th>
                  <th>Batches</th>
                  <th>Deployed</th>
                </tr>
              </thead>
              <tbody>
                {history.map((r, i) => (
                  <tr key={i}>
                    <td>{r.version}</td>
                    <td>{r.strategy}</td>
                    <td>{r.batches?.map((b) => b.targets).join(' + ') ?? '—'}</td>
                    <td>
                      {r.steps.filter((s) => s.status === 'deployed').length}/{r.steps.length}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </div>
      </div>
      <p class="muted small">Refreshed every {executing || pollFast ? 'second while a rollout runs' : '10 s'}.</p>
    </section>
  );
}
