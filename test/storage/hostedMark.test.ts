import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as HostedMark from "../../src/storage/HostedMark.js"
import { hostFiles } from "../../src/storage/hostFiles.js"
import * as LockFile from "../../src/storage/LockFile.js"
import { makeTempDir } from "../support/tempDir.js"

/** A running host's lock in `home`, held until the scope closes. */
const holdHost = (home: string, address: string) =>
  Effect.gen(function*() {
    const files = hostFiles(home)
    NodeFs.mkdirSync(files.dir, { recursive: true })
    yield* LockFile.acquire(files.lockFile, yield* LockFile.currentHolder("kern serve", address), { wait: 0, poll: 10 })
  })

const kernDirIn = () => {
  const dir = NodePath.join(makeTempDir(), ".kern")
  NodeFs.mkdirSync(dir)
  return dir
}

describe("HostedMark", () => {
  it.scoped("a folder's host: the mark, and the host's address while its lock is held", () =>
    Effect.gen(function*() {
      const kernDir = kernDirIn()
      const home = makeTempDir()
      expect(Option.isNone(yield* HostedMark.hostOf(kernDir))).toBe(true)
      yield* HostedMark.write(kernDir, { home, name: "alpha" })
      const asleep = yield* HostedMark.hostOf(kernDir)
      expect(Option.map(asleep, (h) => [h.mark, Option.isNone(h.holder)])).toEqual(Option.some([{ home, name: "alpha" }, true]))
      expect(Option.flatMap(asleep, HostedMark.agentAddress)).toEqual(Option.none())
      yield* holdHost(home, "http://127.0.0.1:4000")
      expect(Option.flatMap(yield* HostedMark.hostOf(kernDir), HostedMark.agentAddress)).toEqual(Option.some("http://127.0.0.1:4000/agents/alpha"))
      // Another host's entry is not there to remove; its own is removed, and with the last entry the file.
      yield* HostedMark.removeIf(kernDir, { home, name: "beta" })
      expect(yield* HostedMark.read(kernDir)).toHaveLength(1)
      yield* HostedMark.removeIf(kernDir, { home, name: "alpha" })
      expect(yield* HostedMark.read(kernDir)).toEqual([])
      expect(NodeFs.existsSync(HostedMark.markFile(kernDir))).toBe(false)
      expect(NodeFs.readdirSync(kernDir)).toEqual([])
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("several runners host one folder: each has its entry, clients take one that runs, one leaving leaves the others", () =>
    Effect.gen(function*() {
      const kernDir = kernDirIn()
      const [one, two, three] = [makeTempDir(), makeTempDir(), makeTempDir()]
      yield* HostedMark.write(kernDir, { home: one, name: "alpha", address: "http://10.0.0.1:4000" })
      yield* HostedMark.write(kernDir, { home: two, name: "alpha", address: "http://10.0.0.2:4000" })
      yield* HostedMark.write(kernDir, { home: three, name: "a3", address: "http://10.0.0.3:4000" })
      // Written again (a host restarted on another port): its entry is brought up to date, not doubled.
      yield* HostedMark.write(kernDir, { home: two, name: "alpha", address: "http://10.0.0.2:4001" })
      expect((yield* HostedMark.read(kernDir)).map((h) => [h.home, h.name, h.address])).toEqual([
        [one, "alpha", "http://10.0.0.1:4000"],
        [three, "a3", "http://10.0.0.3:4000"],
        [two, "alpha", "http://10.0.0.2:4001"]
      ])
      // Only the second runs: clients go there, whichever came first.
      yield* holdHost(two, "http://127.0.0.1:4102")
      expect(Option.flatMap(yield* HostedMark.hostOf(kernDir), HostedMark.agentAddress)).toEqual(Option.some("http://127.0.0.1:4102/agents/alpha"))
      // The first stops hosting it: the others stay, and clients still find the one that runs.
      yield* HostedMark.removeIf(kernDir, { home: one, name: "alpha" })
      expect((yield* HostedMark.read(kernDir)).map((h) => h.home)).toEqual([three, two])
      expect(Option.map(yield* HostedMark.hostOf(kernDir), (h) => h.mark.home)).toEqual(Option.some(two))
    }).pipe(Effect.provide(NodeContext.layer)))

  // On the real clock: a runner waits for the mark's lock by polling it.
  it.live("runners adding themselves at once lose no entry", () =>
    Effect.gen(function*() {
      const kernDir = kernDirIn()
      const homes = Array.from({ length: 12 }, () => makeTempDir())
      yield* Effect.forEach(homes, (home) => HostedMark.write(kernDir, { home, name: "alpha" }), { concurrency: "unbounded" })
      expect(new Set((yield* HostedMark.read(kernDir)).map((h) => h.home))).toEqual(new Set(homes))
      yield* Effect.forEach(homes.slice(0, 6), (home) => HostedMark.removeIf(kernDir, { home, name: "alpha" }), { concurrency: "unbounded" })
      expect(new Set((yield* HostedMark.read(kernDir)).map((h) => h.home))).toEqual(new Set(homes.slice(6)))
    }).pipe(Effect.provide(NodeContext.layer)), 60_000)

  it.scoped("a mark one host wrote before runners (`{ home, name }`) is read as its entry, and kept when another adds itself", () =>
    Effect.gen(function*() {
      const kernDir = kernDirIn()
      const [old, other] = [makeTempDir(), makeTempDir()]
      NodeFs.writeFileSync(HostedMark.markFile(kernDir), JSON.stringify({ home: old, name: "alpha" }))
      expect(yield* HostedMark.read(kernDir)).toEqual([{ home: old, name: "alpha" }])
      yield* holdHost(old, "http://127.0.0.1:4200")
      expect(Option.flatMap(yield* HostedMark.hostOf(kernDir), HostedMark.agentAddress)).toEqual(Option.some("http://127.0.0.1:4200/agents/alpha"))
      yield* HostedMark.write(kernDir, { home: other, name: "alpha" })
      expect((yield* HostedMark.read(kernDir)).map((h) => h.home)).toEqual([old, other])
      expect(JSON.parse(NodeFs.readFileSync(HostedMark.markFile(kernDir), "utf8")).hosts).toHaveLength(2)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("a mark that is not one (a name that is no agent name, a relative home, not JSON) is no host", () =>
    Effect.gen(function*() {
      const kernDir = kernDirIn()
      for (const text of ['{"home":"/srv","name":"../../x"}', '{"hosts":[{"home":"/srv","name":"../x"}]}', '{"hosts":{}}', '{"home":"srv","name":"alpha"}', "{", '{"home":"/srv","name":"a/b"}']) {
        NodeFs.writeFileSync(HostedMark.markFile(kernDir), text)
        expect(Option.isNone(yield* HostedMark.hostOf(kernDir)), text).toBe(true)
        expect(yield* HostedMark.read(kernDir), text).toEqual([])
      }
    }).pipe(Effect.provide(NodeContext.layer)))
})
