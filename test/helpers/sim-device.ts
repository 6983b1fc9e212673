import { spawn, type ChildProcess } from 'node:child_process';
import { REPO_ROOT, SVC_BIN } from './spawn-agent.js';

/**
 * An emulated device (`svc sim-device …`, the compiled build: run `npm run build` first) in its own
 * process, so a test can kill it like a device that dies. Its output is drained and discarded.
 */
export function simDevice(args: string[]): ChildProcess {
  const child = spawn(process.execPath, [SVC_BIN, 'sim-device', ...args], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', () => undefined);
  child.stderr!.on('data', () => undefined);
  return child;
}
