import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

export const REPO_ROOT = path.resolve(__dirname, '../..');
export const SVC_BIN = path.join(REPO_ROOT, 'bin/svc.js');

/** Runs `svc serve` as a real child process (the compiled build) and waits for its "listening" line. */
export async function spawnServe(
  args: string[],
  env: Record<string, string>,
  cwd = REPO_ROOT,
): Promise<{ child: ChildProcess; baseUrl: string; output: () => string }> {
  const child = spawn(process.execPath, [SVC_BIN, 'serve', '--bind', '127.0.0.1:0', ...args], {
    cwd,
    env: { PATH: process.env['PATH'] ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`svc serve did not start:\n${out}`)), 15_000);
    const check = () => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`svc serve exited with ${code}:\n${out}`));
    });
  });
  return { child, baseUrl, output: () => out };
}

export function waitForExit(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}
