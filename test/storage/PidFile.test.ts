import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as LockFile from "../../src/storage/LockFile.js"
import * as PidFile from "../../src/storage/PidFile.js"
import { makeTempDir } from "../support/tempDir.js"

describe("PidFile", () => {
  it.live("a reader while the record is rewritten (kern start's, then the agent's own) always finds a record, never an empty file", () =>
    Effect.gen(function*() {
      const file = NodePath.join(makeTempDir(), "agent.pid")
      const started = yield* LockFile.currentHolder("kern start")
      const serving = yield* LockFile.currentHolder("kern start", "http://127.0.0.1:4100")
      yield* PidFile.write(file, started)
      const writes = Effect.forEach(Array.from({ length: 300 }, (_, i) => i), (i) => PidFile.write(file, i % 2 === 0 ? serving : started), {
        discard: true
      })
      const reads = Effect.forEach(Array.from({ length: 300 }), () => PidFile.read(file))
      const [, seen] = yield* Effect.all([writes, reads], { concurrency: "unbounded" })
      const missing = seen.filter(Option.isNone).length
      assert.strictEqual(missing, 0, `${missing} of ${seen.length} reads found no record`)
      assert.strictEqual(Option.getOrThrow(yield* PidFile.read(file)).pid, process.pid)
      // No temporary file is left beside it.
      assert.deepStrictEqual(NodeFs.readdirSync(NodePath.dirname(file)), ["agent.pid"])
    }).pipe(Effect.provide(NodeContext.layer)))
})
