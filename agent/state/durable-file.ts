import fs from 'node:fs';
import path from 'node:path';
import type { Adapter } from 'lowdb';

/**
 * Replaces `file` with `text` so that, once the promise resolves, the new content survives a crash
 * or a power cut, and at no moment can a reader find a torn file (docs/security.md §10, "Durability"):
 * write a temporary file beside it, fsync it, rename it over the old one, fsync the directory (the
 * rename itself lives in the directory entry). lowdb's own writer stops after the rename, which
 * survives `kill -9` but not a power cut.
 */
export async function writeFileDurably(file: string, text: string, mode = 0o600): Promise<void> {
  const temp = tempPathOf(file);
  try {
    const handle = await fs.promises.open(temp, 'w', mode);
    try {
      await handle.writeFile(text, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.promises.rename(temp, file);
  } catch (err) {
    await fs.promises.rm(temp, { force: true });
    throw err;
  }
  await syncDirectory(path.dirname(file));
}

/**
 * The same, blocking: for rare writes made inside a handler (a recorded trace, an entity fragment, a
 * tamper baseline), where the whole write is one step of the request anyway.
 */
export function writeFileDurablySync(file: string, text: string, mode = 0o600): void {
  const temp = tempPathOf(file);
  try {
    const fd = fs.openSync(temp, 'w', mode);
    try {
      fs.writeFileSync(fd, text, 'utf8');
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(temp, file);
  } catch (err) {
    fs.rmSync(temp, { force: true });
    throw err;
  }
  fsyncDir(path.dirname(file));
}

/** Creates `file` (refusing one that exists) holding `data`, fsynced before it is closed. */
export function writeNewFileSync(file: string, data: string | Buffer, mode = 0o600): void {
  const fd = fs.openSync(file, 'wx', mode);
  try {
    if (typeof data === 'string') fs.writeSync(fd, data);
    else fs.writeSync(fd, data);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Makes a rename or a new file in `dir` durable (the directory entry is what changed). */
export function fsyncDir(dir: string): void {
  let fd: number | null = null;
  try {
    fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
  } catch {
    /* some platforms cannot open a directory for fsync; the file fsyncs still hold */
  } finally {
    if (fd !== null) fs.closeSync(fd);
  }
}

/**
 * A hidden temporary beside the file. One name per file is enough: a process writes a given file
 * from one place at a time (stores serialise their writes; the sync variant cannot interleave), and
 * a temporary left by a crash is simply overwritten by the next write.
 */
function tempPathOf(file: string): string {
  return path.join(path.dirname(file), `.${path.basename(file)}.tmp`);
}

async function syncDirectory(dir: string): Promise<void> {
  const handle = await fs.promises.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * A lowdb adapter for one JSON document written with `writeFileDurably`. The document is serialised
 * synchronously when `write` is called, so the bytes written are exactly the state at that moment
 * even if the caller changes it while the write is under way.
 */
export class DurableJsonFile<T> implements Adapter<T> {
  constructor(readonly file: string) {}

  async read(): Promise<T | null> {
    let text: string;
    try {
      text = await fs.promises.readFile(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
    return JSON.parse(text) as T;
  }

  write(data: T): Promise<void> {
    return writeFileDurably(this.file, JSON.stringify(data, null, 2) + '\n');
  }
}
