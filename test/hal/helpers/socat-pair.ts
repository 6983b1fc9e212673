/**
 * Pseudo-terminal pairs made by `socat` for serial/SLCAN tests on real kernel ttys:
 *   socat -d -d pty,raw,echo=0,link=A pty,raw,echo=0,link=B
 * Bytes written to A come out of B and vice versa. `kill()` ends socat (SIGTERM: it removes the links,
 * the ptys hang up, readers see the port vanish); `restart()` starts a new socat on the same link paths.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, promises as fs, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export const socatAvailable: boolean = spawnSync('socat', ['-V'], { stdio: 'ignore' }).status === 0;
export const SOCAT_SKIP_REASON = 'socat is not installed (apt-get install -y socat): pty-based serial/SLCAN tests skipped';

export interface SocatPair {
  /** Link paths (symlinks to /dev/pts/N). */
  a: string;
  b: string;
  /** Temporary directory holding the links. */
  dir: string;
  readonly pid: number | undefined;
  /** Stop socat (default SIGTERM) and wait for it to exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Start a new socat with the same link paths (after kill). */
  restart(): Promise<void>;
  /** kill + remove the temp dir. */
  dispose(): Promise<void>;
}

async function linkReady(p: string): Promise<boolean> {
  try {
    await fs.stat(p); // follows the symlink to the pts
    return true;
  } catch {
    return false;
  }
}

async function launch(a: string, b: string, timeoutMs: number): Promise<ChildProcess> {
  const child = spawn('socat', ['-d', '-d', `pty,raw,echo=0,link=${a}`, `pty,raw,echo=0,link=${b}`], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  let exited: number | null = null;
  child.on('exit', (code) => {
    exited = code ?? -1;
  });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (exited !== null) throw new Error(`socat exited (${exited}) before creating its ptys: ${stderr.trim()}`);
    // "starting data transfer loop" = both ptys exist and socat is copying
    if (stderr.includes('starting data transfer loop') && (await linkReady(a)) && (await linkReady(b))) return child;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`socat did not create ${a} and ${b} within ${timeoutMs} ms: ${stderr.trim()}`);
    }
    await new Promise((r) => setTimeout(r, 10));
  }
}

export async function startSocatPair(options: { dir?: string; a?: string; b?: string; timeoutMs?: number } = {}): Promise<SocatPair> {
  const dir = options.dir ?? mkdtempSync(path.join(tmpdir(), 'svc-hal-'));
  const a = options.a ?? path.join(dir, 'ttyA');
  const b = options.b ?? path.join(dir, 'ttyB');
  const timeoutMs = options.timeoutMs ?? 5000;
  let child: ChildProcess | null = await launch(a, b, timeoutMs);

  const kill = async (signal: NodeJS.Signals = 'SIGTERM'): Promise<void> => {
    const c = child;
    child = null;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      c.once('exit', () => resolve());
      c.kill(signal);
    });
    // after SIGKILL the links stay behind, pointing at ptys that no longer exist
    if (signal === 'SIGKILL') await Promise.all([fs.rm(a, { force: true }), fs.rm(b, { force: true })]);
  };
  return {
    a,
    b,
    dir,
    get pid() {
      return child?.pid;
    },
    kill,
    async restart() {
      await kill();
      child = await launch(a, b, timeoutMs);
    },
    async dispose() {
      await kill();
      if (!options.dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Poll until `pred()` is true; throws with `what` after `timeoutMs`. */
export async function waitFor(pred: () => boolean, timeoutMs = 5000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
