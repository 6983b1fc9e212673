import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/agent-harness.js';

/** scripts/parse-corpus.mjs on a directory of our own: counts, failures, intentionally invalid files apart. */
const SCRIPT = path.resolve(__dirname, '../../../scripts/parse-corpus.mjs');

describe('scripts/parse-corpus.mjs', () => {
  it('prints parsed/total, lists failures, and counts intentionally invalid files apart', () => {
    const dir = tempDir('svc-corpus-');
    fs.writeFileSync(path.join(dir, 'good.sd'), 'robot A { sensor imu: IMU from bosch.bno055; }\n');
    fs.writeFileSync(path.join(dir, 'bad.sd'), 'robot B { sensor imu IMU; }\n');
    fs.writeFileSync(path.join(dir, 'typo.sd'), 'robot C { behavior b() { wheelz.stop(); } }\n');
    fs.mkdirSync(path.join(dir, 'invalid'));
    fs.writeFileSync(path.join(dir, 'invalid', 'broken.sd'), 'robot D {\n');
    const run = (...args: string[]) => spawnSync(process.execPath, [SCRIPT, ...args, dir], { encoding: 'utf8' });

    const parsed = run();
    expect(parsed.status).toBe(1);
    const rel = path.relative(path.resolve(__dirname, '../../..'), dir);
    expect(parsed.stdout).toBe(
      [
        'parsed 2/3 (66.7 %)',
        `  FAIL ${rel}/bad.sd: ${rel}/bad.sd:1:22: expected ':' after sensor name 'imu', found 'IMU'`,
        'intentionally invalid: 1 (1 rejected as expected)',
        `  rejected ${rel}/invalid/broken.sd: ${rel}/invalid/broken.sd:1:9: unclosed '{': no matching '}' before end of file`,
        '',
      ].join('\n'),
    );
    const typed = run('--type-check');
    expect(typed.stdout.split('\n').slice(0, 3)).toEqual([
      'parsed and type-checked 1/3 (33.3 %)',
      `  FAIL ${rel}/bad.sd: ${rel}/bad.sd:1:22: expected ':' after sensor name 'imu', found 'IMU'`,
      `  FAIL ${rel}/typo.sd: type: type error: undefined identifier 'wheelz' in behavior b (line 1, column 26)`,
    ]);
  });
});
