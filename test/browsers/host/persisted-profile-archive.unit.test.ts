import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readArchive } from '../../../server/browsers/host/profiles/persistedProfile.ts';

/**
 * The archive a sandboxed browser leaves is read from a folder its (hostile) user may write: the
 * host reads a regular file only, never through a link to a file of its own, nor from a pipe.
 */
const dir = mkdtempSync(path.join(os.tmpdir(), 'r35-persist-archive-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('reading the archive a browser left', () => {
  it('reads a regular file within the bound, and only its size past it', () => {
    const file = path.join(dir, 'saved.tar.gz');
    writeFileSync(file, Buffer.alloc(100, 1));
    expect(readArchive(file, 100)).toEqual({ size: 100, bytes: Buffer.alloc(100, 1) });
    expect(readArchive(file, 99)).toEqual({ size: 100 });
  });

  it('refuses a symbolic link (to a file of the host), a pipe, a folder and a missing file', () => {
    const secret = path.join(dir, 'host-secret');
    writeFileSync(secret, 'not for the browser');
    const link = path.join(dir, 'link.tar.gz');
    symlinkSync(secret, link);
    expect(readArchive(link, 1000)).toBeUndefined();
    const fifo = path.join(dir, 'fifo.tar.gz');
    execFileSync('mkfifo', [fifo]);
    expect(readArchive(fifo, 1000)).toBeUndefined();
    expect(readArchive(dir, 1000)).toBeUndefined();
    expect(readArchive(path.join(dir, 'none'), 1000)).toBeUndefined();
  });
});
