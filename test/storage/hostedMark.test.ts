import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as HostedMark from "../../src/storage/HostedMark.js"
import { hostFiles } from "../../src/storage/hostFiles.js"
import * as LockFile from "../../src/storage/LockFile.js"
import { makeTempDir } from "../support/tempDir.js"

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
      const files = hostFiles(home)
      NodeFs.mkdirSync(files.dir)
      yield* LockFile.acquire(files.lockFile, yield* LockFile.currentHolder("kern serve", "http://127.0.0.1:4000"), { wait: 0, poll: 10 })
      expect(Option.flatMap(yield* HostedMark.hostOf(kernDir), HostedMark.agentAddress)).toEqual(Option.some("http://127.0.0.1:4000/agents/alpha"))
      // Another host's mark is left alone; its own is removed.
      yield* HostedMark.removeIf(kernDir, { home, name: "beta" })
      expect(Option.isSome(yield* HostedMark.read(kernDir))).toBe(true)
      yield* HostedMark.removeIf(kernDir, { home, name: "alpha" })
      expect(Option.isNone(yield* HostedMark.read(kernDir))).toBe(true)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("a mark that is not one (a name that is no agent name, a relative home, not JSON) is no host", () =>
    Effect.gen(function*() {
      const kernDir = kernDirIn()
      for (const text of ['{"home":"/srv","name":"../../x"}', '{"home":"srv","name":"alpha"}', "{", '{"home":"/srv","name":"a/b"}']) {
        NodeFs.writeFileSync(HostedMark.markFile(kernDir), text)
        expect(Option.isNone(yield* HostedMark.hostOf(kernDir)), text).toBe(true)
      }
    }).pipe(Effect.provide(NodeContext.layer)))
})
