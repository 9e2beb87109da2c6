import { spawnSync } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { makeTempDir } from './catalog.ts';

/** Mounts a tmpfs of `size` (as `mount -o size=` takes it) on a fresh folder, or says why it cannot (mounting needs root on Linux, in a container that allows it). */
export async function mountSmallDisk(size: string): Promise<{ dir: string } | { reason: string }> {
  if (process.platform !== 'linux') return { reason: 'tmpfs mounts need Linux' };
  const dir = await makeTempDir('geoshelf-small-disk-');
  const result = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { encoding: 'utf8' });
  if (result.status === 0) return { dir };
  await rm(dir, { recursive: true, force: true });
  return { reason: `mount -t tmpfs failed: ${(result.stderr || result.error?.message || 'no reason given').trim()}` };
}

/** Unmounts a disk of {@link mountSmallDisk} and removes its folder. */
export async function unmount(dir: string): Promise<void> {
  spawnSync('umount', [dir]);
  await rm(dir, { recursive: true, force: true });
}
