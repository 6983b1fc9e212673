import { useState } from 'preact/hooks';
import { can, describeError, type Session } from '../api.js';
import { useLoad } from '../use-load.js';
import { RawJson, Verdict } from '../components/raw-json.js';

/** One plan of the recovery orchestrator (docs/recovery.md § Planning). */
interface Plan {
  plan_id: string;
  entity_id: string;
  entity_kind: string;
  failure: string;
  classification: string;
  diagnosis: string;
  strategies: string[];
  escalation_level: string;
  risk: string;
  estimated_duration_secs: number;
  playbook: { name: string } | null;
  decision: {
    can_recover: boolean;
    should_recover: boolean;
    is_safe: boolean;
    is_authorized: boolean;
    automatic: boolean;
    recommended_strategy: string;
    recommended_level: string;
    mission_disruption_score: number;
    backup_entity_id: string | null;
    requires_approval?: boolean;
    explanations: string[];
  };
  upstream_impact: string[];
  downstream_impact: string[];
}

/** An evidence record (docs/recovery.md § Validation gates and evidence). */
interface Evidence {
  evidence_id: string;
  plan_id: string;
  entity_id: string;
  root_cause: string;
  strategy: string;
  status: string;
  executed: boolean;
  duration_secs: number;
  timestamp: string;
  validation_gates: { gate: string; passed: boolean }[];
  effects: { strategy: string; kind: string; action: string; target: string; ok: boolean; detail: string }[];
}

interface Metrics {
  total_recoveries: number;
  successful_recoveries: number;
  failed_recoveries: number;
  success_rate: number;
  average_duration_secs: number;
  recovery_confidence: number;
  most_effective_strategies: { strategy: string; success_rate: number; average_duration_secs: number; usage_count: number }[];
  repeated_failures: unknown[];
}

interface Report {
  plans: Plan[];
  evidence?: Evidence[];
  simulation_mode?: string;
  passed?: boolean;
}

type Mode = 'plan' | 'simulate' | 'validate';

/**
 * Recovery (docs/panel.md § Views, docs/recovery.md): the orchestrator's plans, history and metrics;
 * plan, simulate and validate a recovery for an entity and failure (sensitive reads, nothing
 * stored); execute it (`force_execute`, the Recover action) only after an in-page confirmation
 * that shows the plan about to run. Without Recover the execute control is not there at all.
 */
export function Recovery({ session }: { session: Session }) {
  const c = session.client;
  const plans = useLoad(async () => ((await c.listRecoveryPlans()) as { plans: Plan[] }).plans);
  const history = useLoad(async () => ((await c.getRecoveryHistory()) as { history: Evidence[] }).history, 10_000);
  const metrics = useLoad(async () => ((await c.getRecoveryMetrics()) as { metrics: Metrics }).metrics, 10_000);
  const entities = useLoad(async () => ((await c.listRecoverableEntities()) as { entities: { id: string; kind: string }[] }).entities);
  const recover = can(session, 'Recover');

  const [entityId, setEntityId] = useState('');
  const [failure, setFailure] = useState('');
  const [result, setResult] = useState<{ mode: string; report: Report; validation?: unknown } | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  /** The plan an execution would run, shown in the confirmation dialog. */
  const [confirming, setConfirming] = useState<Plan[] | null>(null);

  const target = () => ({ ...(entityId.trim() ? { entity_id: entityId.trim() } : {}), ...(failure.trim() ? { failure: failure.trim() } : {}) });

  const evaluate = async (mode: Mode) => {
    setBusy(true);
    setError(null);
    try {
      const body = target();
      const answer = (await (mode === 'plan' ? c.planRecovery(body) : mode === 'simulate' ? c.simulateRecovery(body) : c.validateRecovery(body))) as {
        report: Report;
        validation?: unknown;
      };
      setResult({ mode, report: answer.report, validation: answer.validation });
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };

  // Plan first, so the dialog says exactly what would run; nothing executes until "Execute" in it.
  const askExecute = async () => {
    setBusy(true);
    setError(null);
    try {
      const answer = (await c.planRecovery(target())) as { report: Report };
      setConfirming(answer.report.plans);
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };

  const execute = async () => {
    setConfirming(null);
    setBusy(true);
    setError(null);
    try {
      const answer = (await c.executeRecovery({ ...target(), force_execute: true })) as { report: Report };
      setResult({ mode: 'execute', report: answer.report });
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
      history.reload();
      metrics.reload();
    }
  };

  const pick = (p: Plan) => {
    setEntityId(p.entity_id);
    setFailure(p.failure);
    setResult(null);
  };

  const m = metrics.data;
  return (
    <section class="view" data-view="recovery">
      <h2>Recovery</h2>
      <div class="cards">
        <div class="card" data-testid="recovery-metrics">
          <h3>Metrics</h3>
          {metrics.error && <p class="error">{metrics.error}</p>}
          {m && (
            <dl>
              <dt>Recoveries</dt>
              <dd data-testid="metric-total">{m.total_recoveries}</dd>
              <dt>Succeeded / failed</dt>
              <dd>
                {m.successful_recoveries} / {m.failed_recoveries}
              </dd>
              <dt>Success rate</dt>
              <dd>{Math.round(m.success_rate * 100)} %</dd>
              <dt>Mean duration</dt>
              <dd>{m.average_duration_secs} s</dd>
              <dt>Confidence</dt>
              <dd>{m.recovery_confidence}</dd>
              <dt>Best strategies</dt>
              <dd>{m.most_effective_strategies.map((s) => `${s.strategy} (${Math.round(s.success_rate * 100)} %, ×${s.usage_count})`).join(', ') || '—'}</dd>
            </dl>
          )}
        </div>
        <div class="card" data-testid="recovery-target">
          <h3>Plan, simulate, validate{recover ? ', execute' : ''}</h3>
          <form class="form-row" onSubmit={(e) => (e.preventDefault(), evaluate('plan'))}>
            <label>
              Entity
              <input name="entity_id" list="recovery-entities" value={entityId} placeholder="(first five)" onInput={(e) => setEntityId(e.currentTarget.value)} />
            </label>
            <datalist id="recovery-entities">
              {(entities.data ?? []).map((e) => (
                <option key={e.id} value={e.id}>
                  {e.kind}
                </option>
              ))}
            </datalist>
            <label>
              Failure
              <input name="failure" value={failure} placeholder="e.g. lidar_timeout" onInput={(e) => setFailure(e.currentTarget.value)} />
            </label>
          </form>
          <div class="actions">
            <button disabled={busy} onClick={() => evaluate('plan')}>
              Plan
            </button>
            <button disabled={busy} onClick={() => evaluate('simulate')}>
              Simulate
            </button>
            <button disabled={busy} onClick={() => evaluate('validate')}>
              Validate
            </button>
            {recover && (
              <button class="danger" disabled={busy} onClick={askExecute} data-testid="execute">
                Execute…
              </button>
            )}
          </div>
          <p class="muted">
            Plan, simulate and validate store nothing. {recover ? 'Execute applies the plan’s effects and records evidence (Recover).' : 'Executing needs the Recover permission.'}
          </p>
          {error && <p class="error" role="alert">{error}</p>}
        </div>
      </div>

      {result && <ResultCard result={result} />}

      <div class="card">
        <h3>Plans</h3>
        <p class="muted">For the first five registry entities, failure “&lt;id&gt;_health_check”; pick one to evaluate it.</p>
        {plans.error && <p class="error">{plans.error}</p>}
        {plans.data && plans.data.length === 0 && <p class="muted">No plans.</p>}
        {plans.data && plans.data.length > 0 && <PlanTable plans={plans.data} onPick={pick} />}
      </div>

      <div class="card">
        <h3>History</h3>
        {history.error && <p class="error">{history.error}</p>}
        {history.data && history.data.length === 0 && <p class="muted">No recovery has been executed.</p>}
        {history.data && history.data.length > 0 && (
          <table data-testid="recovery-history">
            <thead>
              <tr>
                <th>Time</th>
                <th>Entity</th>
                <th>Failure</th>
                <th>Strategy</th>
                <th>Status</th>
                <th>Gates</th>
                <th>Effects</th>
                <th>Duration</th>
              </tr>
            </thead>
            <tbody>
              {history.data.map((h) => (
                <tr key={h.evidence_id} data-evidence={h.evidence_id}>
                  <td>{new Date(h.timestamp).toLocaleString()}</td>
                  <td>{h.entity_id}</td>
                  <td>{h.root_cause}</td>
                  <td>{h.strategy}</td>
                  <td>
                    <span class={`status status-${h.status === 'Success' ? 'healthy' : h.status === 'Failed' ? 'failed' : 'degraded'}`}>{h.status}</span>
                  </td>
                  <td>
                    {h.validation_gates.filter((g) => g.passed).length}/{h.validation_gates.length}
                  </td>
                  <td class="wrap">{h.effects.map((e) => `${e.action} → ${e.target}: ${e.ok ? 'ok' : 'failed'}`).join('; ') || '—'}</td>
                  <td>{h.duration_secs} s</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </div>

      {confirming && (
        <ConfirmExecute
          plans={confirming}
          target={target()}
          onCancel={() => setConfirming(null)}
          onConfirm={execute}
        />
      )}
    </section>
  );
}

function PlanTable({ plans, onPick }: { plans: Plan[]; onPick?: (p: Plan) => void }) {
  return (
    <table data-testid={onPick ? 'recovery-plans' : undefined}>
      <thead>
        <tr>
          <th>Entity</th>
          <th>Failure</th>
          <th>Classification</th>
          <th>Strategy</th>
          <th>Level</th>
          <th>Risk</th>
          <th>Recover?</th>
          <th>Approval</th>
        </tr>
      </thead>
      <tbody>
        {plans.map((p) => (
          <tr key={p.plan_id} data-plan={p.plan_id} class={onPick ? 'pick' : ''} onClick={onPick ? () => onPick(p) : undefined}>
            <td>
              {p.entity_id} <span class="muted">({p.entity_kind})</span>
            </td>
            <td>{p.failure}</td>
            <td>{p.classification}</td>
            <td>{p.strategies.join(', ') || p.decision.recommended_strategy}</td>
            <td>{p.escalation_level}</td>
            <td>{p.risk}</td>
            <td>
              <Verdict ok={p.decision.should_recover} yes={p.decision.automatic ? 'automatic' : 'yes'} no="no" />
            </td>
            <td>{p.decision.requires_approval ? 'required' : 'no'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function ResultCard({ result }: { result: { mode: string; report: Report; validation?: unknown } }) {
  const { report } = result;
  return (
    <div class="card" data-testid="recovery-result" data-mode={result.mode}>
      <h3>
        Result of {result.mode}
        {report.passed !== undefined && (
          <>
            {' · '}
            <Verdict ok={report.passed} />
          </>
        )}
      </h3>
      {report.plans.length === 0 ? <p class="muted">No plan: the entity is not in the registry.</p> : <PlanTable plans={report.plans} />}
      {report.plans.map((p) => (
        <details key={p.plan_id}>
          <summary>Why ({p.plan_id})</summary>
          <ul class="issues">
            {p.decision.explanations.map((x, n) => (
              <li key={n}>{x}</li>
            ))}
          </ul>
        </details>
      ))}
      {(report.evidence ?? []).map((e) => (
        <div key={e.evidence_id} class="evidence">
          <h4>
            {e.evidence_id}: {e.status} {e.executed ? '(executed)' : '(nothing executed)'}
          </h4>
          <p>
            Gates:{' '}
            {e.validation_gates.map((g) => (
              <span key={g.gate} class={`gate ${g.passed ? 'verdict-ok' : 'verdict-bad'}`}>
                {g.gate.replace(/_/g, ' ')}
              </span>
            ))}
          </p>
          {e.effects.length > 0 && (
            <ul class="issues">
              {e.effects.map((x, n) => (
                <li key={n}>
                  <Verdict ok={x.ok} yes="ok" no="failed" /> {x.detail}
                </li>
              ))}
            </ul>
          )}
        </div>
      ))}
      <RawJson value={result} />
    </div>
  );
}

/** The in-page confirmation of an execution: what will run, on what, with which effects (docs/recovery.md § Execute). */
function ConfirmExecute({ plans, target, onCancel, onConfirm }: { plans: Plan[]; target: { entity_id?: string; failure?: string }; onCancel: () => void; onConfirm: () => void }) {
  const runs = plans.filter((p) => p.decision.should_recover);
  return (
    <div class="modal-backdrop" onClick={(e) => e.target === e.currentTarget && onCancel()}>
      <div class="modal card" role="dialog" aria-modal="true" aria-labelledby="confirm-title" data-testid="confirm-execute">
        <h3 id="confirm-title">Execute recovery?</h3>
        <p>
          Target: <strong>{target.entity_id ?? 'the first five entities'}</strong>, failure <strong>{target.failure ?? '(each entity’s health check)'}</strong>.
        </p>
        {runs.length === 0 ? (
          <p data-testid="confirm-summary">No plan should recover: executing records nothing and applies no effect.</p>
        ) : (
          <ul class="issues" data-testid="confirm-summary">
            {runs.map((p) => (
              <li key={p.plan_id}>
                <strong>{p.entity_id}</strong> ({p.entity_kind}): {p.strategies.join(' → ') || p.decision.recommended_strategy} at {p.escalation_level}, risk {p.risk}
                {p.decision.backup_entity_id ? `, backup ${p.decision.backup_entity_id}` : ''}; {p.downstream_impact.length} entities downstream
              </li>
            ))}
          </ul>
        )}
        <p class="muted">
          This applies the plan’s effects on the robot (device actions, mission pauses or fleet-agent commands), records evidence in the recovery history and emits
          RecoveryTriggered/RecoveryCompleted events. It cannot be undone from here.
        </p>
        <div class="actions">
          <button class="secondary" onClick={onCancel} data-testid="confirm-cancel" autofocus>
            Cancel
          </button>
          <button class="danger" onClick={onConfirm} data-testid="confirm-execute-button">
            Execute
          </button>
        </div>
      </div>
    </div>
  );
}
