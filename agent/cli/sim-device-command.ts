import { UsageError } from './args.js';

export interface SimDeviceOptions {
  firmwareSelfTest?: 'pass' | 'fail' | 'corrupt';
  corruptEvery?: number;
  id: string;
  deviceType: string;
  firmwareVersion: string;
  /** Telemetry samples per second. */
  rateHz: number;
  /** Faults reported in heartbeats from the start (e.g. `overtemp`). */
  faults: string[];
  /** Hardware faults that survive clear_faults and reboots. */
  persistentFaults?: string[];
  seed: number;
}

const KNOWN = new Set(['serial', 'slcan', 'mqtt', 'id', 'type', 'firmware', 'rate', 'fault', 'persistent-fault', 'seed', 'node', 'baud', 'bitrate', 'prefix', 'update-self-test', 'corrupt-every']);

/**
 * `svc sim-device --serial PATH | --slcan PATH | --mqtt URL --id ID [--type T] [--firmware V]
 * [--rate HZ] [--fault NAME[,NAME]] [--persistent-fault NAME[,NAME]] [--seed N]`: an emulated device that speaks the real protocol
 * over the real transport until interrupted.
 */
export async function simDeviceCommand(options: Map<string, string | true>): Promise<void> {
  for (const k of options.keys()) if (!KNOWN.has(k)) throw new UsageError(`unknown option --${k} for sim-device`);
  const str = (k: string): string | null => {
    const v = options.get(k);
    if (v === undefined) return null;
    if (v === true) throw new UsageError(`--${k} needs a value`);
    return v;
  };
  const id = str('id');
  if (!id) throw new UsageError('sim-device needs --id ID');
  const rate = Number(str('rate') ?? '2');
  if (!Number.isFinite(rate) || rate <= 0 || rate > 10_000) throw new UsageError('--rate must be a positive number of samples per second (at most 10000)');
  const sim: SimDeviceOptions = {
    id,
    deviceType: str('type') ?? 'environment',
    firmwareVersion: str('firmware') ?? '1.0.0',
    rateHz: rate,
    faults: (str('fault') ?? '').split(',').filter(Boolean),
    seed: Number(str('seed') ?? '1') || 1,
  };
  const persistent = (str('persistent-fault') ?? '').split(',').filter(Boolean);
  if (persistent.length > 0) sim.persistentFaults = persistent;
  const selfTest = str('update-self-test');
  if (selfTest !== null && !['pass', 'fail', 'corrupt'].includes(selfTest)) throw new UsageError('--update-self-test must be pass, fail or corrupt');
  if (selfTest) sim.firmwareSelfTest = selfTest as 'pass' | 'fail' | 'corrupt';
  const corrupt = str('corrupt-every');
  if (corrupt !== null) {
    const n = Number(corrupt);
    if (!Number.isInteger(n) || n < 1) throw new UsageError('--corrupt-every must be a whole number of frames');
    sim.corruptEvery = n;
  }
  const transports = ['serial', 'slcan', 'mqtt'].filter((t) => options.has(t));
  if (transports.length !== 1) throw new UsageError('sim-device needs exactly one of --serial PATH, --slcan PATH, --mqtt URL');
  const transport = transports[0]!;
  const target = str(transport)!;
  const { runEmulator } = await import('../../sim/index.js');
  const stop = await runEmulator(transport as 'serial' | 'slcan' | 'mqtt', target, sim, {
    node: str('node') ? Number(str('node')) : undefined,
    baudRate: str('baud') ? Number(str('baud')) : undefined,
    bitrate: str('bitrate') ? Number(str('bitrate')) : undefined,
    prefix: str('prefix') ?? undefined,
  });
  process.stdout.write(`sim-device ${id} (${sim.deviceType}, firmware ${sim.firmwareVersion}) on ${transport} ${target}\n`);
  const shutdown = (signal: string) => {
    process.stderr.write(`${signal}: sim-device ${id} stopping\n`);
    stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}
