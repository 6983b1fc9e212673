/** The answer as the agent sent it, folded away under the rendered report (docs/panel.md § Views). */
export function RawJson({ value, label = 'Raw JSON' }: { value: unknown; label?: string }) {
  return (
    <details class="raw-json">
      <summary>{label}</summary>
      <pre>{JSON.stringify(value, null, 2)}</pre>
    </details>
  );
}

/** A pass/fail word with its colour. */
export function Verdict({ ok, yes = 'PASS', no = 'FAIL', testid }: { ok: boolean; yes?: string; no?: string; testid?: string }) {
  return (
    <span class={`verdict ${ok ? 'verdict-ok' : 'verdict-bad'}`} data-testid={testid}>
      {ok ? yes : no}
    </span>
  );
}
