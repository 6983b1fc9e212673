import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/**
 * A real Debian `mosquitto` for tests: a generated config (loopback listener on a free port, anonymous,
 * `set_tcp_nodelay true`, no persistence), started as a child process and awaited until it accepts
 * TCP connections. `restart()` comes back on the same port (for reconnect tests).
 */

export interface MosquittoBroker {
  readonly host: string;
  readonly port: number;
  /** `mqtt://127.0.0.1:<port>` */
  readonly url: string;
  /** Stops the broker (SIGTERM, SIGKILL after 3 s). The port stays reserved for `restart()`. */
  stop(): Promise<void>;
  /** Stops (if running) and starts again on the same port; retained messages are gone (no persistence). */
  restart(): Promise<void>;
  /** Stops the broker and removes its temporary directory. */
  dispose(): Promise<void>;
  /** The broker's log so far (for failure messages). */
  log(): string;
}

const SEARCH_DIRS = ['/usr/sbin', '/usr/local/sbin', '/usr/bin', '/usr/local/bin'];

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Path of the `mosquitto` binary, or null: `$MOSQUITTO_BIN` when set (only that), else PATH, then the
 * sbin directories Debian installs to (not on a normal user's PATH).
 */
export function findMosquitto(): string | null {
  const forced = process.env['MOSQUITTO_BIN'];
  if (forced) return isExecutable(forced) ? forced : null;
  const dirs = [...(process.env['PATH'] ?? '').split(path.delimiter).filter(Boolean), ...SEARCH_DIRS];
  for (const dir of dirs) {
    const candidate = path.join(dir, 'mosquitto');
    if (isExecutable(candidate)) return candidate;
  }
  return null;
}

/** Why MQTT integration tests are skipped, or null when they can run. */
export const MOSQUITTO_SKIP_REASON: string | null = findMosquitto()
  ? null
  : process.env['MOSQUITTO_BIN']
    ? `MOSQUITTO_BIN=${process.env['MOSQUITTO_BIN']} is not an executable`
    : 'mosquitto is not installed (apt-get install -y mosquitto; CI installs it)';

export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, host, () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

function canConnect(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host, port });
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
    s.setTimeout(500, () => done(false));
  });
}

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

export async function startMosquitto(options: { host?: string } = {}): Promise<MosquittoBroker> {
  const bin = findMosquitto();
  if (!bin) throw new Error(MOSQUITTO_SKIP_REASON!);
  const host = options.host ?? '127.0.0.1';
  const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-mosquitto-'));
  const confPath = path.join(dir, 'mosquitto.conf');
  let child: ChildProcess | null = null;
  let output = '';

  const writeConfig = (port: number) => {
    const lines = [
      `listener ${port} ${host}`,
      'allow_anonymous true',
      'set_tcp_nodelay true',
      'persistence false',
      'log_dest stderr',
      'log_type error',
      'log_type warning',
      'log_type notice',
    ];
    // As root, mosquitto drops privileges to the `mosquitto` user, which may not exist in a container.
    if (process.getuid?.() === 0) lines.push('user root');
    writeFileSync(confPath, lines.join('\n') + '\n');
  };

  const launch = async (port: number): Promise<void> => {
    writeConfig(port);
    const proc = spawn(bin, ['-c', confPath], { stdio: ['ignore', 'pipe', 'pipe'] });
    child = proc;
    live.add(proc);
    proc.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    proc.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    let exited: string | null = null;
    proc.once('exit', (code, signal) => {
      live.delete(proc);
      exited = `exited with ${code ?? signal}`;
    });
    const deadline = Date.now() + 5000;
    for (;;) {
      if (exited) throw new Error(`mosquitto ${exited} before accepting connections on ${host}:${port}:\n${output}`);
      if (await canConnect(host, port)) return;
      if (Date.now() > deadline) {
        proc.kill('SIGKILL');
        throw new Error(`mosquitto did not accept connections on ${host}:${port} within 5 s:\n${output}`);
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  const stop = async (): Promise<void> => {
    const proc = child;
    child = null;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      const kill = setTimeout(() => proc.kill('SIGKILL'), 3000);
      proc.once('exit', () => {
        clearTimeout(kill);
        resolve();
      });
      proc.kill('SIGTERM');
    });
  };

  // The free port is found then released before mosquitto binds it: retry on the rare collision.
  let port = 0;
  for (let attempt = 0; ; attempt++) {
    port = await freePort(host);
    try {
      await launch(port);
      break;
    } catch (err) {
      await stop();
      if (attempt >= 2) {
        rmSync(dir, { recursive: true, force: true });
        throw err;
      }
    }
  }

  return {
    host,
    port,
    url: `mqtt://${host}:${port}`,
    stop,
    async restart() {
      await stop();
      await launch(port);
    },
    async dispose() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
    log: () => output,
  };
}
