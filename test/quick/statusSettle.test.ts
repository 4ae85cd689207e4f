import { describe, expect, it } from "@effect/vitest"
import * as NodeFs from "node:fs"
import { fineSettleMs, settled, settleMs } from "../../src/quick/statusSettle.js"
import { makeTempDir } from "../support/tempDir.js"

// The settle rule of the kept `kern status` report (src/quick/statusSettle.ts) over stamps as stat gives them: a fine
// stamp of a local file system settles after 100 ms; a whole one, one of another file system or another system's, after 2 s.

const ext4 = 0xef53
const tmpfs = 0x01021994
const nfs = 0x6969
const smb2 = 0xfe534d42
const v9fs = 0x01021997
const fuse = 0x65735546

const now = 1_795_000_000_000
/** A stamp `ageMs` before `now`, with `subMs` nanoseconds below its millisecond. */
const stampAt = (ageMs: number, subMs: bigint, fileSystem: number | undefined) => {
  let asked = 0
  const stamp = {
    mtimeNs: BigInt(now - ageMs) * 1_000_000n + subMs,
    fileSystem: () => {
      asked++
      return fileSystem
    }
  }
  return { stamp, asked: () => asked }
}

describe("when a file's stamp has settled", () => {
  it("a fine stamp of a local file system: after 100 ms", () => {
    for (const fileSystem of [ext4, tmpfs, 0x58465342, 0x9123683e, 0xf2f52010, 0x794c7630]) {
      expect(settled(stampAt(fineSettleMs + 1, 123_456n, fileSystem).stamp, now, "linux")).toBe(true)
      expect(settled(stampAt(500, 1n, fileSystem).stamp, now, "linux")).toBe(true)
      // Not yet: within 100 ms, at its edge, or the stamp's millisecond not yet over.
      expect(settled(stampAt(fineSettleMs, 0n, fileSystem).stamp, now, "linux")).toBe(false)
      expect(settled(stampAt(fineSettleMs - 1, 999_999n, fileSystem).stamp, now, "linux")).toBe(false)
      expect(settled(stampAt(0, 1n, fileSystem).stamp, now, "linux")).toBe(false)
    }
  })

  it("stamps forced whole (seconds, 10 ms, 2 s, or a whole millisecond): 2 s, as git's racy-clean rule", () => {
    for (const ageMs of [fineSettleMs + 1, 500, 1_000, 1_999, settleMs]) {
      const whole = stampAt(ageMs, 0n, ext4)
      expect(settled(whole.stamp, now, "linux"), `${ageMs} ms`).toBe(false)
      // Decided by the stamp: the file system is not asked.
      expect(whole.asked()).toBe(0)
    }
    expect(settled(stampAt(settleMs + 1, 0n, ext4).stamp, now, "linux")).toBe(true)
    // A whole second, as ext4 with small inodes keeps, two seconds and more old.
    expect(settled({ mtimeNs: BigInt(Math.floor(now / 1_000) - 3) * 1_000_000_000n, fileSystem: () => ext4 }, now, "linux")).toBe(true)
    expect(settled({ mtimeNs: BigInt(Math.floor(now / 1_000) - 1) * 1_000_000_000n, fileSystem: () => ext4 }, now, "linux")).toBe(false)
  })

  it("a file system with another clock (NFS, SMB, 9p, FUSE), one that cannot be asked, or not Linux: 2 s", () => {
    for (const fileSystem of [nfs, smb2, v9fs, fuse, undefined]) {
      expect(settled(stampAt(500, 123_456n, fileSystem).stamp, now, "linux"), String(fileSystem)).toBe(false)
      expect(settled(stampAt(settleMs + 1, 123_456n, fileSystem).stamp, now, "linux"), String(fileSystem)).toBe(true)
    }
    for (const platform of ["darwin", "win32", "freebsd"]) {
      const other = stampAt(500, 123_456n, ext4)
      expect(settled(other.stamp, now, platform)).toBe(false)
      expect(other.asked()).toBe(0)
    }
  })

  it("a stamp in the future (a clock set back, a file from another machine) has not settled", () => {
    expect(settled(stampAt(-5_000, 123_456n, ext4).stamp, now, "linux")).toBe(false)
    expect(settled(stampAt(-5_000, 0n, ext4).stamp, now, "linux")).toBe(false)
  })

  it("the file system is asked only for a stamp between 100 ms and 2 s old", () => {
    const young = stampAt(10, 5n, ext4)
    settled(young.stamp, now, "linux")
    const old = stampAt(settleMs + 10, 5n, ext4)
    settled(old.stamp, now, "linux")
    const between = stampAt(300, 5n, ext4)
    settled(between.stamp, now, "linux")
    expect([young.asked(), old.asked(), between.asked()]).toEqual([0, 0, 1])
  })

  it.skipIf(process.platform !== "linux")("here: a file written now is stamped by the clock Date.now() reads, within a tick, and settles after 100 ms", () => {
    const file = `${makeTempDir()}/stamped`
    const before = Date.now()
    NodeFs.writeFileSync(file, "x")
    const info = NodeFs.statSync(file, { bigint: true })
    const type = NodeFs.statfsSync(file).type
    // Not older than the clock read before the write by more than the short rule allows.
    expect(BigInt(before) * 1_000_000n - info.mtimeNs).toBeLessThan(BigInt(fineSettleMs) * 1_000_000n)
    const stamp = { mtimeNs: info.mtimeNs, fileSystem: () => type }
    expect(settled(stamp, before)).toBe(false)
    // The temporary folder of this machine: ext4 or tmpfs, whose stamps are fine.
    if ([ext4, tmpfs].includes(type) && info.mtimeNs % 1_000_000n !== 0n) {
      expect(settled(stamp, Number(info.mtimeNs / 1_000_000n) + fineSettleMs + 1)).toBe(true)
    }
  })
})
