import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveInsideProject } from '../../agent/project/project-paths.js';

function project() {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'svc-paths-')));
  const root = path.join(base, 'robot');
  fs.mkdirSync(path.join(root, 'programs'), { recursive: true });
  fs.writeFileSync(path.join(root, 'programs/patrol.sd'), '');
  fs.writeFileSync(path.join(base, 'secret.txt'), 'outside');
  return { base, root };
}

describe('paths inside the project root', () => {
  it('joins relative paths to the root and accepts absolute paths inside it', () => {
    const { root } = project();
    expect(resolveInsideProject(root, 'programs/patrol.sd')).toBe(path.join(root, 'programs/patrol.sd'));
    expect(resolveInsideProject(root, './programs/../programs/patrol.sd')).toBe(path.join(root, 'programs/patrol.sd'));
    expect(resolveInsideProject(root, path.join(root, 'programs/patrol.sd'))).toBe(path.join(root, 'programs/patrol.sd'));
    expect(resolveInsideProject(root, 'programs/not-yet.sd')).toBe(path.join(root, 'programs/not-yet.sd'));
  });

  it('refuses .., absolute paths elsewhere, NUL bytes and symlinks leading out, with 400', () => {
    const { base, root } = project();
    fs.symlinkSync(path.join(base, 'secret.txt'), path.join(root, 'programs/link.sd'));
    fs.symlinkSync(base, path.join(root, 'outside-dir'));
    for (const p of ['../secret.txt', 'programs/../../secret.txt', path.join(base, 'secret.txt'), '/etc/passwd', 'programs/link.sd', 'outside-dir/secret.txt', 'outside-dir/new.sd', 'a\0b', '']) {
      let err: unknown = null;
      try {
        resolveInsideProject(root, p);
      } catch (e) {
        err = e;
      }
      expect(err, p).toMatchObject({ status: 400, code: 'bad_request' });
    }
  });
});
