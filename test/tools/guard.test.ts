import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import type { ToolFailure } from "../../src/kernel/ToolFailure.js"
import { read } from "../../src/tools/read.js"
import { write } from "../../src/tools/write.js"
import { inSession, makeTempDir, makeWorkspace, type ToolRequirements, toolsLayer } from "./support.js"

const readArgs = (path: string) => ({ path, offset: 1, limit: 10 })

describe("workspace guard", () => {
  const root = makeWorkspace({ "inside.txt": "ok\n", "sub/deep.txt": "deep\n" })
  const outside = NodeFs.realpathSync(makeTempDir("kern-outside-"))
  NodeFs.writeFileSync(NodePath.join(outside, "secret.txt"), "secret\n")
  NodeFs.symlinkSync("/etc", NodePath.join(root, "etc-link"))
  NodeFs.symlinkSync(NodePath.join(outside, "secret.txt"), NodePath.join(root, "secret-link.txt"))
  NodeFs.symlinkSync(NodePath.join(outside, "new.txt"), NodePath.join(root, "dangling-out.txt"))
  NodeFs.symlinkSync("loop-b", NodePath.join(root, "loop-a"))
  NodeFs.symlinkSync("loop-a", NodePath.join(root, "loop-b"))
  NodeFs.symlinkSync("sub", NodePath.join(root, "sub-link"))
  const guarded = toolsLayer(root, {}, { memoryDb: true })

  const failure = (effect: Effect.Effect<unknown, { readonly code: string; readonly message: string }, never>) =>
    Effect.flip(effect)

  it.effect("refuses ../ traversal, absolute paths outside and symlinks out, with PERMISSION_DENIED", () =>
    Effect.gen(function*() {
      const relativeOut = NodePath.relative(root, NodePath.join(outside, "secret.txt"))
      const attempts: ReadonlyArray<Effect.Effect<unknown, ToolFailure, ToolRequirements>> = [
        read(readArgs("../../etc/passwd")),
        read(readArgs(relativeOut)),
        read(readArgs("/etc/passwd")),
        read(readArgs(NodePath.join(outside, "secret.txt"))),
        read(readArgs("etc-link/passwd")),
        read(readArgs("etc-link")),
        read(readArgs("secret-link.txt")),
        write({ path: "dangling-out.txt", content: "escape" }),
        write({ path: "etc-link/kern-test", content: "escape" }),
        write({ path: "sub/../../escape.txt", content: "escape" })
      ]
      for (const attempt of attempts) {
        const error = yield* failure(attempt.pipe(inSession(), Effect.provide(guarded)))
        assert.strictEqual(error.code, "PERMISSION_DENIED", error.message)
      }
      assert.isFalse(NodeFs.existsSync(NodePath.join(outside, "new.txt")))
    }))

  it.effect("a symlink loop is a clean VALIDATION_ERROR", () =>
    Effect.gen(function*() {
      const error = yield* failure(read(readArgs("loop-a")).pipe(inSession(), Effect.provide(guarded)))
      assert.strictEqual(error.code, "VALIDATION_ERROR")
      assert.include(error.message, "symlink loop")
      const below = yield* failure(write({ path: "loop-a/x.txt", content: "x" }).pipe(inSession(), Effect.provide(guarded)))
      assert.strictEqual(below.code, "VALIDATION_ERROR")
    }))

  it.effect("allows paths inside, including .. that stays inside and symlinks that stay inside", () =>
    Effect.gen(function*() {
      const results = yield* Effect.all([
        read(readArgs("sub/../inside.txt")),
        read(readArgs(NodePath.join(root, "inside.txt"))),
        read(readArgs("sub-link/deep.txt"))
      ]).pipe(inSession(), Effect.provide(guarded))
      assert.deepStrictEqual(results.map((out) => out.path), ["inside.txt", "inside.txt", "sub/deep.txt"])
    }))

  it.effect("extra roots are reachable; with the guard off everything is", () =>
    Effect.gen(function*() {
      const extra = yield* read(readArgs(NodePath.join(outside, "secret.txt"))).pipe(
        inSession(),
        Effect.provide(toolsLayer(root, { extraRoots: [outside] }, { memoryDb: true }))
      )
      assert.include(extra.text, "secret")
      const open = yield* read(readArgs("secret-link.txt")).pipe(
        inSession(),
        Effect.provide(toolsLayer(root, { guard: false }, { memoryDb: true }))
      )
      assert.include(open.text, "secret")
    }))
})
