import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from '../helpers/agent-harness.js';
import { SVC_BIN } from '../helpers/spawn-agent.js';

/**
 * A temp folder holding the CLI fixtures (test/cli/fixtures) and a private state directory; `svc`
 * runs the built binary there, so relative paths in the output are the ones typed.
 */
export function fixtureCli(prefix: string) {
  const dir = tempDir(`${prefix}-`);
  const stateDir = tempDir(`${prefix}-state-`);
  fs.cpSync(path.join(__dirname, 'fixtures'), dir, { recursive: true });
  const svc = (args: string[], cwd = dir) => {
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
  return { dir, stateDir, svc, json };
}
