// Serial discovery: globs over real socat pty links, realpath folding, SerialPort.list failures tolerated.
import { promises as fs, realpathSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_SERIAL_GLOBS,
  discoverSerialPorts,
  expandSerialGlob,
  globSegmentToRegExp,
  hasGlob,
  splitPortList,
} from '../../hal/serial/discover-serial.js';
import { SOCAT_SKIP_REASON, socatAvailable, startSocatPair, type SocatPair } from './helpers/socat-pair.js';

if (!socatAvailable) console.warn(`[test/hal/serial-discovery] ${SOCAT_SKIP_REASON}`);

describe('glob helpers', () => {
  it('matches * and ? within one path segment only', () => {
    const re = globSegmentToRegExp('ttyUSB*');
    expect(re.test('ttyUSB0')).toBe(true);
    expect(re.test('ttyUSB12')).toBe(true);
    expect(re.test('ttyUSB')).toBe(true);
    expect(re.test('ttyACM0')).toBe(false);
    expect(re.test('xttyUSB0')).toBe(false);
    const q = globSegmentToRegExp('svc-?.dev');
    expect(q.test('svc-a.dev')).toBe(true);
    expect(q.test('svc-ab.dev')).toBe(false);
    expect(q.test('svc-axdev')).toBe(false); // '.' is literal
    expect(globSegmentToRegExp('a+(b)[c]').test('a+(b)[c]')).toBe(true);
  });

  it('splits comma-separated configuration values', () => {
    expect(splitPortList(' /dev/ttyUSB0, /tmp/svc-* ,,')).toEqual(['/dev/ttyUSB0', '/tmp/svc-*']);
    expect(splitPortList(undefined)).toEqual([]);
    expect(hasGlob('/dev/ttyUSB*')).toBe(true);
    expect(hasGlob('/dev/ttyUSB0')).toBe(false);
    expect(DEFAULT_SERIAL_GLOBS).toEqual(['/dev/ttyUSB*', '/dev/ttyACM*']);
  });

  it('refuses wildcards outside the last segment and tolerates missing directories', async () => {
    await expect(expandSerialGlob('/dev/*/ttyUSB0')).rejects.toThrow(/last path segment/);
    expect(await expandSerialGlob('/nonexistent-dir-svc/tty*')).toEqual([]);
    expect(await expandSerialGlob('/nonexistent-dir-svc/ttyUSB0')).toEqual([]);
  });

  it('sorts naturally and skips hidden entries unless asked', async () => {
    const dir = await fs.mkdtemp('/tmp/svc-glob-');
    try {
      for (const n of ['ttyUSB10', 'ttyUSB2', 'ttyUSB1', '.ttyUSB9', 'other']) await fs.writeFile(path.join(dir, n), '');
      expect(await expandSerialGlob(`${dir}/ttyUSB*`)).toEqual(['ttyUSB1', 'ttyUSB2', 'ttyUSB10'].map((n) => path.join(dir, n)));
      expect(await expandSerialGlob(`${dir}/.ttyUSB?`)).toEqual([path.join(dir, '.ttyUSB9')]);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});

describe.skipIf(!socatAvailable)(`discoverSerialPorts over socat links${socatAvailable ? '' : ` (skipped: ${SOCAT_SKIP_REASON})`}`, () => {
  let p: SocatPair;
  let q: SocatPair;
  beforeAll(async () => {
    p = await startSocatPair();
    q = await startSocatPair();
  });
  afterAll(async () => {
    await p?.dispose();
    await q?.dispose();
  });

  it('finds configured globs, folds symlinks onto their device, and reports missing paths', async () => {
    const realA = realpathSync(p.a);
    const realB = realpathSync(p.b);
    expect(realA).toMatch(/^\/dev\/pts\/\d+$/);
    const res = await discoverSerialPorts({
      patterns: [`${p.dir}/tty*`, realA, `${q.dir}/ttyA`, '/tmp/svc-definitely-missing-port'],
      useList: false,
      defaults: false,
    });
    const byReal = new Map(res.ports.map((c) => [c.realPath, c]));
    expect(res.ports).toHaveLength(3);
    expect(byReal.get(realA)).toMatchObject({ path: p.a, aliases: [p.a, realA], sources: ['configured'] });
    expect(byReal.get(realB)).toMatchObject({ path: p.b, aliases: [p.b] });
    expect(byReal.get(realpathSync(q.a))?.path).toBe(q.a);
    expect(res.missing).toEqual(['/tmp/svc-definitely-missing-port']);
    expect(res.errors).toEqual([]);
  });

  it('merges SerialPort.list() results (with their USB details) and tolerates list failures', async () => {
    const realA = realpathSync(p.a);
    const listed = await discoverSerialPorts({
      patterns: [`${p.dir}/ttyA`],
      defaults: false,
      list: async () => [{ path: realA, manufacturer: 'FTDI', serialNumber: 'A1B2', vendorId: '0403', productId: '6001' }],
    });
    expect(listed.ports).toHaveLength(1);
    expect(listed.ports[0]).toMatchObject({
      path: p.a,
      realPath: realA,
      sources: ['configured', 'list'],
      manufacturer: 'FTDI',
      serialNumber: 'A1B2',
      vendorId: '0403',
      productId: '6001',
    });

    const failing = await discoverSerialPorts({
      patterns: [`${p.dir}/ttyA`],
      defaults: false,
      list: async () => {
        throw new Error('spawn udevadm ENOENT');
      },
    });
    expect(failing.ports.map((c) => c.path)).toEqual([p.a]);
    expect(failing.errors).toEqual(['SerialPort.list failed (spawn udevadm ENOENT); using globs only']);

    const hanging = await discoverSerialPorts({ patterns: [`${p.dir}/ttyB`], defaults: false, listTimeoutMs: 50, list: () => new Promise(() => undefined) });
    expect(hanging.ports.map((c) => c.path)).toEqual([p.b]);
    expect(hanging.errors[0]).toMatch(/timed out after 50 ms/);
  });

  it('runs with the real SerialPort.list() and default globs on this machine without throwing', async () => {
    const res = await discoverSerialPorts({ patterns: [`${p.dir}/tty*`] });
    expect(res.ports.map((c) => c.path)).toEqual(expect.arrayContaining([p.a, p.b]));
    // Each result is a distinct device.
    expect(new Set(res.ports.map((c) => c.realPath)).size).toBe(res.ports.length);
  });

  it('drops links whose pty is gone', async () => {
    const r = await startSocatPair();
    await r.kill('SIGKILL'); // links removed by the helper; check a dangling one too
    await fs.symlink('/dev/pts/999999', path.join(r.dir, 'ttyDangling'));
    const res = await discoverSerialPorts({ patterns: [`${r.dir}/tty*`], useList: false, defaults: false });
    expect(res.ports).toEqual([]);
    await r.dispose();
  });
});
