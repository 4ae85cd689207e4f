// The helper thread that opens a scan's files ahead of it (src/storage/openAhead.ts): the descriptors it opens are
// the process's, each is the file its path named, and none is left open when the scan stops, however far ahead of
// the scan the helper got.
import { describe, expect, it } from "@effect/vitest"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { makeOpenAhead, notOpened } from "../../src/storage/openAhead.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"
import { waitUntil } from "../support/waitFor.js"

const flags = NodeFs.constants.O_RDONLY | NodeFs.constants.O_NOFOLLOW | NodeFs.constants.O_NONBLOCK
const openCount = () => NodeFs.readdirSync("/proc/self/fd").length
const threadCount = () => NodeFs.readdirSync("/proc/self/task").length

const folderOf = (count: number) => {
  const dir = makeTempDir("kern-open-ahead-")
  writeFiles(dir, Object.fromEntries(Array.from({ length: count }, (_, i) => [`f${i}.txt`, `file ${i}\n`])))
  return { dir, paths: Array.from({ length: count }, (_, i) => NodePath.join(dir, `f${i}.txt`)) }
}

describe.skipIf(!NodeFs.existsSync("/proc/self/fd"))("openAhead", () => {
  it("the helper's descriptors are the files named, usable by the scan after the helper has stopped", async () => {
    const { dir, paths } = folderOf(40)
    const before = openCount()
    const ahead = makeOpenAhead(paths.length + 2, flags)
    expect(ahead).toBeDefined()
    ahead!.add([...paths.slice(0, 20), "", NodePath.join(dir, "missing.txt")])
    ahead!.add(paths.slice(20))
    // The helper opens ahead of any take: its descriptors appear in the process.
    expect(await waitUntil(() => openCount() >= before + 40)).toBe(true)
    const fds = Array.from({ length: 42 }, (_, index) => ahead!.take(index))
    expect(fds[20]).toBe(notOpened)
    expect(fds[21]).toBe(notOpened)
    const threads = threadCount()
    ahead!.stop()
    const opened = [...fds.slice(0, 20), ...fds.slice(22)]
    opened.forEach((fd, i) => {
      expect(fd).toBeGreaterThanOrEqual(0)
      expect(NodeFs.fstatSync(fd).ino).toBe(NodeFs.statSync(paths[i]!).ino)
    })
    // Still open once the helper thread has ended (it must not close what it opened on exit).
    expect(await waitUntil(() => threadCount() < threads)).toBe(true)
    const buffer = Buffer.alloc(64)
    for (const fd of opened) expect(NodeFs.readSync(fd, buffer, 0, 64, 0)).toBeGreaterThan(0)
    for (const fd of opened) NodeFs.closeSync(fd)
    expect(openCount()).toBe(before)
  })

  it("stopping leaves nothing open, whatever the helper had opened ahead and not handed over", async () => {
    const { paths } = folderOf(200)
    const before = openCount()
    const ahead = makeOpenAhead(paths.length, flags)!
    ahead.add(paths)
    expect(await waitUntil(() => openCount() >= before + 100)).toBe(true)
    const taken = Array.from({ length: 10 }, (_, index) => ahead.take(index))
    for (const fd of taken) NodeFs.closeSync(fd)
    const threads = threadCount()
    ahead.stop()
    // Once the helper thread has ended (its own event loop holds a few descriptors), nothing of the scan is open.
    expect(await waitUntil(() => threadCount() < threads)).toBe(true)
    expect(openCount()).toBe(before)
  })

  it("a path the helper has not reached is opened by the scan itself, in order", async () => {
    const { paths } = folderOf(30)
    const before = openCount()
    const ahead = makeOpenAhead(paths.length, flags)!
    ahead.add(paths)
    // Taken at once, before the helper thread has even started: every descriptor is there all the same.
    const fds = paths.map((_, index) => ahead.take(index))
    const threads = threadCount()
    ahead.stop()
    fds.forEach((fd, i) => expect(NodeFs.fstatSync(fd).ino).toBe(NodeFs.statSync(paths[i]!).ino))
    for (const fd of fds) NodeFs.closeSync(fd)
    expect(await waitUntil(() => threadCount() < threads)).toBe(true)
    expect(openCount()).toBe(before)
    expect(() => ahead.take(0)).toThrow()
  })
})
