import os from 'node:os';
import path from 'node:path';
import { ApiError } from '../core/errors.js';
import { invoke } from '../core/invoke.js';
import { cliWords, pathParams, type OperationSpec } from '../core/operation.js';
import { Agent } from '../runtime/agent.js';
import type { Principal } from '../security/principal.js';
import { UsageError } from './args.js';

/** Options every operation command understands; the rest become body fields or query parameters. */
export const COMMON_OPTIONS = new Set(['config', 'program', 'url', 'body', 'pretty', 'json']);

/** The table entry whose CLI words start `words`, longest match first. */
export function findOperation(operations: readonly OperationSpec[], words: readonly string[]): { op: OperationSpec; rest: string[] } | null {
  let best: { op: OperationSpec; rest: string[]; len: number } | null = null;
  for (const op of operations) {
    const canonical = cliWords(op);
    if (!canonical) continue;
    for (const w of [canonical, ...(op.cliAliases ?? [])]) {
      if (w.length > words.length) continue;
      if (w.every((x, i) => x === words[i]) && (!best || w.length > best.len)) best = { op, rest: words.slice(w.length), len: w.length };
    }
  }
  return best ? { op: best.op, rest: best.rest } : null;
}

/** `--count 3` → 3, `--on true` → true, `--name rover` → "rover": JSON when it parses, else text. */
function optionValue(v: string | true): unknown {
  if (v === true) return true;
  try {
    return JSON.parse(v);
  } catch {
    return v;
  }
}

/**
 * The operation's input from the command line. `localCwd` is set when the command runs in-process:
 * a positional FILE is then the local user's path, relative to their working directory (over
 * `--url` it is sent as typed and the server resolves it against its project root).
 */
export function buildInput(op: OperationSpec, rest: readonly string[], options: Map<string, string | true>, localCwd?: string) {
  const names = pathParams(op.path);
  const positional = op.cliArgs ?? [];
  // Positional fields are optional from the right (a missing FILE means the server's --program).
  if (rest.length < names.length || rest.length > names.length + positional.length) {
    const expected = [...names.map((n) => `<${n}>`), ...positional.map((n) => `[${n.toUpperCase()}]`)];
    throw new UsageError(`expected ${expected.length ? expected.join(' ') : 'no arguments'} after '${cliWords(op)!.join(' ')}'`);
  }
  const params = Object.fromEntries(names.map((n, i) => [n, rest[i]!]));
  const fields: Record<string, unknown> = {};
  const query: Record<string, string> = {};
  positional.forEach((field, i) => {
    const given = rest[names.length + i];
    if (given === undefined) return;
    const value = field === 'file' && localCwd ? path.resolve(localCwd, given) : given;
    if (op.method === 'GET') query[field] = value;
    else fields[field] = value;
  });
  const bodyOpt = options.get('body');
  if (typeof bodyOpt === 'string') {
    try {
      Object.assign(fields, JSON.parse(bodyOpt));
    } catch (err) {
      throw new UsageError(`--body is not valid JSON: ${(err as Error).message}`);
    }
  }
  for (const [k, v] of options) {
    if (COMMON_OPTIONS.has(k)) continue;
    const key = op.cliOptions?.[k] ?? k.replace(/-/g, '_');
    if (op.method === 'GET') query[key] = v === true ? 'true' : v;
    else fields[key] = optionValue(v);
  }
  return { params, body: op.method === 'GET' ? {} : fields, query };
}

/** Runs an operation in-process with the local user's principal (whoever can read the state dir). */
export async function runLocal(op: OperationSpec, input: ReturnType<typeof buildInput>, options: Map<string, string | true>): Promise<unknown> {
  const agent = await Agent.create({
    configPath: typeof options.get('config') === 'string' ? (options.get('config') as string) : null,
    programPath: typeof options.get('program') === 'string' ? (options.get('program') as string) : null,
    log: () => undefined,
  });
  try {
    const s = agent.services;
    const principal: Principal = {
      key_id: 'local-cli',
      role: 'administrator',
      tenant_id: s.settings.tenantId,
      auth_kind: 'local',
      user_id: os.userInfo().username,
    };
    // Through the invoke kernel like every transport: access, validation, handler, durability, and
    // the audit of a mutation (docs/security.md §10: whatever the transport).
    const local = agent.services.operations.find((o) => o.id === op.id);
    if (!local) throw new Error(`no handler for ${op.id}`);
    const result = await invoke(local, { principal, correlationId: `cli-${Date.now()}`, transport: 'cli', params: input.params, query: input.query, body: () => input.body }, s);
    return result;
  } finally {
    await agent.close();
  }
}

/**
 * Runs an operation against a running agent over REST (`--url` or `SVC_CONTROL_CENTER_URL`),
 * authenticated with `apiKey` (`SVC_API_KEY`, from the settings) when there is one.
 */
export async function runRemote(op: OperationSpec, input: ReturnType<typeof buildInput>, baseUrl: string, apiKey: string | null): Promise<unknown> {
  let pathname = op.path;
  for (const [k, v] of Object.entries(input.params)) pathname = pathname.replace(`{${k}}`, encodeURIComponent(v));
  const url = new URL(pathname, baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
  for (const [k, v] of Object.entries(input.query)) url.searchParams.set(k, v);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (apiKey) headers['authorization'] = `Bearer ${apiKey}`;
  const res = await fetch(url, { method: op.method, headers, ...(op.method === 'GET' ? {} : { body: JSON.stringify(input.body) }) });
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = { ok: false, error: text };
  }
  if (!res.ok) {
    const b = body as { error?: string; code?: string };
    throw new ApiError(res.status, (b.code as never) ?? 'internal_error', b.error ?? `HTTP ${res.status}`);
  }
  return body;
}
