import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from './agent-harness.js';
import { REPO_ROOT, SVC_BIN } from './spawn-agent.js';

/**
 * The built `svc` binary run against a private copy of the demo project, with its own state
 * directory (program commands write traces next to programs and trust baselines to the state).
 */
export function demoProjectCli(prefix: string) {
  return projectCli(prefix, path.join(REPO_ROOT, 'demo'));
}

/** The built `svc` binary run in a private copy of `source` (default cwd: the copy), with its own state directory. */
export function projectCli(prefix: string, source: string) {
  const root = tempDir(`${prefix}-`);
  const stateDir = tempDir(`${prefix}-state-`);
  fs.cpSync(source, root, { recursive: true });
  const svc = (args: string[], cwd = root) => {
    const r = spawnSync(process.execPath, [SVC_BIN, ...args], {
      cwd,
      env: { PATH: process.env['PATH'] ?? '', SVC_CONTROL_CENTER_STATE_DIR: stateDir },
      encoding: 'utf8',
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  const json = (args: string[]) => {
    const r = svc([...args, '--json']);
    return { code: r.code, body: JSON.parse(r.stdout), stderr: r.stderr };
  };
  return { root, stateDir, svc, json };
}
