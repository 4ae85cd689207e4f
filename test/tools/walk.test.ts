import { assert, describe, it } from "@effect/vitest"
import { Effect, Logger, LogLevel } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { walkFiles } from "../../src/tools/walk.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"

const walkLogged = (base: string, root: string) => {
  const logs: Array<string> = []
  const logger = Logger.make(({ message }) => logs.push(String(message)))
  return walkFiles(base, { root, maxFiles: 1000 }).pipe(
    Effect.provide(Logger.replace(Logger.defaultLogger, logger)),
    Logger.withMinimumLogLevel(LogLevel.Warning),
    Effect.map((result) => ({ files: [...result.files].sort(), logs }))
  )
}

describe("walkFiles and .gitignore", () => {
  it.effect("honours the .gitignore files of the base and its ancestors; a missing one is no rule and no warning", () =>
    Effect.gen(function*() {
      const root = makeTempDir()
      writeFiles(root, { ".gitignore": "*.log\n", "sub/a.txt": "a", "sub/b.log": "b", "sub/.gitignore": "a.txt\n", "sub/c.md": "c" })
      const { files, logs } = yield* walkLogged(NodePath.join(root, "sub"), root)
      assert.deepStrictEqual(files, [".gitignore", "c.md"])
      assert.deepStrictEqual(logs, [])
    }))

  it.effect("a .gitignore that cannot be read is not silently dropped: the walk goes on and a warning names it", () =>
    Effect.gen(function*() {
      const root = makeTempDir()
      writeFiles(root, { "sub/a.txt": "a" })
      // A folder where the file should be: reading it fails with EISDIR (as root, permissions would not).
      NodeFs.mkdirSync(NodePath.join(root, ".gitignore"))
      const { files, logs } = yield* walkLogged(NodePath.join(root, "sub"), root)
      assert.deepStrictEqual(files, ["a.txt"])
      assert.strictEqual(logs.length, 1)
      assert.include(logs[0], NodePath.join(root, ".gitignore"))
    }))
})
