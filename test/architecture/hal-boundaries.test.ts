/**
 * Import boundaries of the HAL (hal/README.md, docs/architecture.md "Folders"): the HAL is the
 * transport library at the bottom; the firmware bridge (protocol) may use it, never the reverse; the
 * agent reaches it only through its public surface `hal/index.js` (imports read by ./source-imports.ts).
 */
import { describe, expect, it } from 'vitest';
import { importsOf, sourceFiles, topFolder } from './source-imports.js';

const halFiles = sourceFiles('hal');
const bridgeFiles = sourceFiles('firmware-bridge');
const agentFiles = sourceFiles('agent');

describe('import specifiers', () => {
  it('finds static, re-exported, type-only and dynamic imports, and skips comments', () => {
    const src = [
      "import { a } from '../hal/core/link.js';",
      "import type { B } from '../hal/can/can-frame.js';",
      "export * from './x.js';",
      "export { c } from '../firmware-bridge/frame.js';",
      "const m = await import('../hal/serial/serial-link.js');",
      "import 'node:fs';",
      "// import { z } from '../agent/nope.js';",
      "/* import { y } from '../agent/nope.js'; */",
    ].join('\n');
    expect(importsOf('sim/demo.ts', src)).toEqual([
      'hal/core/link.js',
      'hal/can/can-frame.js',
      'sim/x.js',
      'firmware-bridge/frame.js',
      'hal/serial/serial-link.js',
    ]);
  });
});

describe('HAL import boundaries', () => {
  it('has source files to check', () => {
    expect(halFiles).toContain('hal/index.ts');
    expect(bridgeFiles.length).toBeGreaterThan(0);
    expect(agentFiles.length).toBeGreaterThan(0);
  });

  it('hal/ imports nothing from agent/', () => {
    const bad = halFiles.flatMap((f) => importsOf(f).filter((i) => topFolder(i) === 'agent').map((i) => `${f} -> ${i}`));
    expect(bad).toEqual([]);
  });

  it('hal/ and firmware-bridge/ do not import each other in a circle', () => {
    const halToBridge = halFiles.flatMap((f) => importsOf(f).filter((i) => topFolder(i) === 'firmware-bridge').map((i) => `${f} -> ${i}`));
    const bridgeToHal = bridgeFiles.flatMap((f) => importsOf(f).filter((i) => topFolder(i) === 'hal').map((i) => `${f} -> ${i}`));
    // A cycle needs both directions; the HAL is the lower layer, so it is the one that must stay clean.
    if (bridgeToHal.length > 0) expect(halToBridge).toEqual([]);
    if (halToBridge.length > 0) expect(bridgeToHal).toEqual([]);
  });

  it('hal/ is the lowest layer: it imports nothing from firmware-bridge/ or sim/ (emulators live in sim/)', () => {
    const bad = halFiles.flatMap((f) =>
      importsOf(f)
        .filter((i) => topFolder(i) === 'firmware-bridge' || topFolder(i) === 'sim')
        .map((i) => `${f} -> ${i}`),
    );
    expect(bad).toEqual([]);
  });

  it('agent/ imports the HAL only through hal/index.js', () => {
    const bad = agentFiles.flatMap((f) =>
      importsOf(f)
        .filter((i) => topFolder(i) === 'hal' && i !== 'hal/index.js')
        .map((i) => `${f} -> ${i}`),
    );
    expect(bad).toEqual([]);
  });
});
