import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { edit } from "../../src/tools/edit.js"
import { read } from "../../src/tools/read.js"
import { write } from "../../src/tools/write.js"
import { inSession, makeWorkspace, readText, toolsLayer } from "./support.js"

/**
 * Each "runtime" below is a separate set of tool services over the same folder and kern.db, with its own in-process
 * write lock, as separate processes would have: only what they share on disk keeps them from losing each other's work.
 */
const runtimes = (root: string, count: number) =>
  Effect.forEach(Array.from({ length: count }), () => Layer.build(toolsLayer(root)))

const lines = (count: number) => Array.from({ length: count }, (_, i) => `line ${i}: todo`).join("\n") + "\n"

describe("edits from several runtimes on one file", () => {
  it.live("five runtimes on one session edit one file at once: all succeed and every edit is kept", () =>
    Effect.scoped(Effect.gen(function*() {
      const count = 5
      const root = makeWorkspace({ "shared.md": lines(count) })
      const contexts = yield* runtimes(root, count)
      yield* read({ path: "shared.md", offset: 1, limit: 100 }).pipe(inSession("shared"), Effect.provide(contexts[0]!))
      const results = yield* Effect.all(
        contexts.map((context, i) =>
          edit({ path: "shared.md", oldString: `line ${i}: todo`, newString: `line ${i}: done`, replaceAll: false }).pipe(
            inSession("shared"),
            Effect.provide(context),
            Effect.either
          )
        ),
        { concurrency: "unbounded" }
      )
      const final = readText(root, "shared.md")
      results.forEach((result, i) => {
        if (Either.isRight(result)) assert.include(final, `line ${i}: done`, `edit ${i} reported success but is gone`)
      })
      assert.deepStrictEqual(results.map(Either.isRight), Array.from({ length: count }, () => true))
    })))

  it.live("five runtimes, each in its own session after its own read: one edit wins, the rest are refused, none lost", () =>
    Effect.scoped(Effect.gen(function*() {
      const count = 5
      const root = makeWorkspace({ "shared.md": lines(count) })
      const contexts = yield* runtimes(root, count)
      yield* Effect.forEach(contexts, (context, i) => read({ path: "shared.md", offset: 1, limit: 100 }).pipe(inSession(`s${i}`), Effect.provide(context)))
      const results = yield* Effect.all(
        contexts.map((context, i) =>
          write({ path: "shared.md", content: lines(count).replace(`line ${i}: todo`, `line ${i}: done`) }).pipe(
            inSession(`s${i}`),
            Effect.provide(context),
            Effect.either
          )
        ),
        { concurrency: "unbounded" }
      )
      const final = readText(root, "shared.md")
      const won = results.flatMap((result, i) => Either.isRight(result) ? [i] : [])
      for (const i of won) assert.include(final, `line ${i}: done`, `write ${i} reported success but is gone`)
      assert.lengthOf(won, 1)
      for (const result of results) {
        if (Either.isLeft(result)) assert.include(result.left.message, "changed on disk")
      }
      assert.deepStrictEqual(NodeFs.readdirSync(NodePath.join(root, ".kern", "locks")), [])
    })))
})
