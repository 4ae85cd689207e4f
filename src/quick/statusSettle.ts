// When a file has settled: its last change is old enough that no later change can give it the same stamp, so the key
// `kern status` keeps a stopped agent's report under (src/quick/statusCache.ts), which knows a file by its device,
// inode, mode, size and modification time, sees every later change. Git's racy-clean rule, made as short as the
// stamps allow.
//
// Why it holds, on Linux. Any change to a file's bytes (write, truncate; for a folder, an entry made, removed or
// renamed) stamps its mtime with the kernel's wall clock as it reads it then (current_time()): its coarse clock,
// which the timer tick advances (every 1 to 10 ms: HZ 1000 to 100), or, since Linux 6.13 on ext4, xfs, btrfs and
// tmpfs, the fine clock when the last stamp has been looked at (multigrain stamps), never earlier than the coarse one.
// The file system keeps the stamp truncated to its granularity g. Date.now() reads the fine clock, which the coarse
// one lags by L at most: the time since a tick last advanced it, one tick (a timekeeping CPU held up, in a VM whose
// host has paused it, is taken over by another after a few ticks). So a change made after `now` was read is stamped
// at least now - L - g, and a file whose stamp m is older than now - S, with S > L + g, can never be stamped m again:
// every change from then on shows as a later mtime. With a stamp of the nanosecond (g = 1 ns), S = 100 ms leaves 25
// ticks at HZ 250 (L measured here: 3 ms at most, over 20,000 writes) and 10 at HZ 100.
//
// What the stamp says of g: a stamp with a part below the millisecond was kept by a file system finer than a
// millisecond. A whole one may come from one that keeps whole seconds (ext4 with 128-byte inodes), 10 ms (exFAT) or
// 2 s (FAT), or from a fine one by chance (one stamp in a million); it gets `settleMs`, 2 s, as before.
// Whose clock: only a local file system stamps with this kernel's clock. NFS, SMB, 9p (WSL's drive folders) and FUSE
// take the server's, which may lag this one by more than 100 ms; the short rule is for the file systems statfs names
// below, on Linux only. Elsewhere, and for any file whose file system cannot be asked, 2 s.
//
// The stamp is the modification time, not the change time: SQLite run as root gives kern.db's WAL back to its owner
// at every open, a change time with the same bytes. What neither rule sees, as git's does not: an mtime put back by
// hand (touch -d, cp -p, tar) over a same-size rewrite; a wall clock stepped back; a single write that lasts longer
// than S (its stamp is taken as it starts); bytes written through a mapping already dirty (SQLite writes with write()).
// A rename puts another inode under the name: its stamp is its own last change, and its inode number is another
// (one freed and used again comes from a change after the old file went, stamped later).

/** How old a file's stamp must be before it has settled, when nothing shows it is a fine stamp of this kernel's clock. */
export const settleMs = 2_000

/** How old a fine stamp of this kernel's clock (a local file system's, with a part below the millisecond) must be. */
export const fineSettleMs = 100

/** statfs(2)'s f_type of the local Linux file systems that stamp with the kernel's clock to the nanosecond. */
const fineFileSystems: ReadonlySet<number> = new Set([
  0xef53, // ext2, ext3, ext4 (with 128-byte inodes whole seconds: the stamps say so)
  0x58465342, // xfs
  0x9123683e, // btrfs
  0x01021994, // tmpfs
  0xf2f52010, // f2fs
  0x794c7630 // overlayfs (its upper layer's stamps: a local file system's)
])

/** A file's stamp, and how to ask its file system's type when it matters (statfs f_type; none when it cannot be asked). */
export interface FileStamp {
  readonly mtimeNs: bigint
  readonly fileSystem: () => number | undefined
}

/** Whether the file last changed at `stamp` has settled at `nowMs` (Date.now(), read before the stamp was). */
export const settled = (stamp: FileStamp, nowMs: number, platform: string = process.platform): boolean => {
  const ageNs = BigInt(Math.floor(nowMs)) * 1_000_000n - stamp.mtimeNs
  if (ageNs > BigInt(settleMs) * 1_000_000n) return true
  if (ageNs <= BigInt(fineSettleMs) * 1_000_000n || platform !== "linux" || stamp.mtimeNs % 1_000_000n === 0n) return false
  const type = stamp.fileSystem()
  return type !== undefined && fineFileSystems.has(type)
}
