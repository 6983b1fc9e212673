import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { Agent, type AgentOptions, type ExtraOperations } from '../../agent/runtime/agent.js';

export interface RunningAgent {
  agent: Agent;
  baseUrl: string;
  wsUrl: string;
  stateDir: string;
  fetch(pathname: string, init?: RequestInit): Promise<Response>;
  json(pathname: string, init?: RequestInit): Promise<{ status: number; body: any; headers: Headers }>;
  close(): Promise<void>;
}

export function tempDir(prefix = 'svc-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/**
 * Starts a real agent on an ephemeral loopback port with its own state directory.
 * `env` is the complete environment the agent sees (nothing leaks in from the test process).
 */
export async function startAgent(
  options: { env?: Record<string, string>; stateDir?: string; extra?: ExtraOperations } & Omit<AgentOptions, 'env' | 'bind'> = {},
): Promise<RunningAgent> {
  const stateDir = options.stateDir ?? tempDir('svc-state-');
  const env = { SVC_CONTROL_CENTER_STATE_DIR: stateDir, ...(options.env ?? {}) };
  const { extra, ...agentOptions } = options;
  const agent = await Agent.create({ ...agentOptions, env, bind: '127.0.0.1:0', log: () => undefined }, extra ?? {});
  const bind = await agent.listen();
  const baseUrl = `http://${bind}`;
  const doFetch = (pathname: string, init?: RequestInit) => fetch(`${baseUrl}${pathname}`, init);
  return {
    agent,
    baseUrl,
    wsUrl: `ws://${bind}`,
    stateDir,
    fetch: doFetch,
    async json(pathname, init) {
      const res = await doFetch(pathname, init);
      const text = await res.text();
      let body: any = text;
      try {
        body = JSON.parse(text);
      } catch {
        /* keep text */
      }
      return { status: res.status, body, headers: res.headers };
    },
    close: () => agent.close(),
  };
}
