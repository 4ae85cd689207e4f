import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { contextBudgetStats } from "../../src/tools/contextBudgetStats.js"
import { ContextStats } from "../../src/tools/ContextStats.js"
import { compactToolOutput } from "../../src/tools/OutputCompactor.js"
import { retrieveToolOutput } from "../../src/tools/retrieveToolOutput.js"
import { databases } from "../support/databases.js"
import { inSession, makeWorkspace, toolsLayer } from "./support.js"
import { inRun } from "../kernel/harness.js"

const bigOutput = () =>
  Array.from({ length: 2_000 }, (_, i) => (i === 1_000 ? "FAIL src/x.test.ts > adds numbers" : `build step ${i} ok`)).join("\n")

// The artifact index is in kern.db: these run on both databases it can be on.
describe.each(databases)("compactToolOutput and retrieve_tool_output, kern.db on $dialect", (database) => {
  it.effect("compacts an output over 12 KB with a header naming the sizes and the artifact", () =>
    Effect.gen(function*() {
      const root = makeWorkspace()
      const text = bigOutput()
      const out = yield* compactToolOutput({ sessionId: "s", toolId: "bash", text, isError: false }).pipe(
        Effect.provide(toolsLayer(root, {}, { database: database.layer }))
      )
      assert.strictEqual(out.originalBytes, Buffer.byteLength(text))
      assert.isTrue(out.compactedBytes < out.originalBytes / 4)
      assert.match(out.text.split("\n")[0] ?? "", new RegExp(`^\\[output compacted: ${out.originalBytes} bytes → \\d+ bytes; full output is artifact ${out.artifactId}`))
      assert.include(out.text, "FAIL src/x.test.ts > adds numbers")
      assert.include(out.text, "lines omitted")
      const file = NodeFs.readdirSync(NodePath.join(root, ".kern", "artifacts"))
      assert.strictEqual(file.length, 1)
    }))

  it.effect("leaves small outputs and error outputs under 8 KB whole", () =>
    Effect.gen(function*() {
      const root = makeWorkspace()
      const layer = toolsLayer(root, {}, { database: database.layer })
      const small = yield* compactToolOutput({ sessionId: "s", toolId: "read", text: "hello", isError: false }).pipe(Effect.provide(layer))
      assert.strictEqual(small.text, "hello")
      assert.isUndefined(small.artifactId)
      const errorText = "boom\n".repeat(1_500)
      const error = yield* compactToolOutput({ sessionId: "s", toolId: "bash", text: errorText, isError: true }).pipe(Effect.provide(layer))
      assert.strictEqual(error.text, errorText)
    }))

  it.effect("an output repeated in the same session becomes a short reference; another session gets it whole", () =>
    Effect.gen(function*() {
      const root = makeWorkspace()
      const text = "same listing line\n".repeat(100)
      const result = yield* Effect.gen(function*() {
        const first = yield* compactToolOutput({ sessionId: "a", toolId: "glob", text, isError: false })
        const second = yield* compactToolOutput({ sessionId: "a", toolId: "glob", text, isError: false })
        const other = yield* compactToolOutput({ sessionId: "b", toolId: "glob", text, isError: false })
        const stats = yield* contextBudgetStats({}).pipe(inSession("a"))
        return { first, second, other, stats }
      }).pipe(Effect.provide(toolsLayer(root, {}, { database: database.layer })))
      assert.strictEqual(result.first.text, text)
      assert.strictEqual(result.second.duplicateOf, result.first.artifactId)
      assert.include(result.second.text, "identical to an earlier glob output")
      assert.strictEqual(result.other.text, text)
      assert.strictEqual(result.stats.duplicates, 1)
      assert.strictEqual(result.stats.savedByDuplicatesBytes, result.second.originalBytes - result.second.compactedBytes)
    }))

  it.effect("an unknown artifact is NOT_FOUND", () =>
    Effect.gen(function*() {
      const root = makeWorkspace()
      const error = yield* inRun(retrieveToolOutput({ artifactId: "art_000000000000000000000000", offset: 1, limit: 5 })).pipe(
        Effect.provide(toolsLayer(root, {}, { database: database.layer })),
        Effect.flip
      )
      assert.strictEqual(error.code, "NOT_FOUND")
    }))

  it.effect("context_budget_stats reports the active context and what compaction saved", () =>
    Effect.gen(function*() {
      const root = makeWorkspace()
      const stats = yield* Effect.gen(function*() {
        const compacted = yield* compactToolOutput({ sessionId: "s", toolId: "grep", text: bigOutput(), isError: false })
        yield* Effect.flatMap(ContextStats, (counters) => counters.setActiveContextTokens("s", 10_000))
        const out = yield* contextBudgetStats({}).pipe(inSession("s"))
        return { compacted, out }
      }).pipe(Effect.provide(toolsLayer(root, {}, { database: database.layer })))
      assert.strictEqual(stats.out.activeContextTokens, 10_000)
      assert.include(stats.out.text, "active context: 10000 tokens")
      assert.strictEqual(stats.out.compactions, 1)
      assert.strictEqual(stats.out.savedByCompactionBytes, stats.compacted.originalBytes - stats.compacted.compactedBytes)
      assert.include(stats.out.text, "compaction: 1 output,")
    }))
})

describe("compactToolOutput and retrieve_tool_output across a restart", () => {
  it.effect("the full output can be reopened after a restart (a fresh layer on the same folder)", () =>
    Effect.gen(function*() {
      const root = makeWorkspace()
      const text = bigOutput()
      const compacted = yield* compactToolOutput({ sessionId: "s", toolId: "bash", text, isError: false }).pipe(
        Effect.provide(toolsLayer(root))
      )
      const artifactId = compacted.artifactId ?? "missing"
      const page = yield* inRun(retrieveToolOutput({ artifactId, offset: 999, limit: 3 })).pipe(Effect.provide(toolsLayer(root)))
      assert.deepStrictEqual(page.text.split("\n").slice(1, 4), [
        " 999\tbuild step 998 ok",
        "1000\tbuild step 999 ok",
        "1001\tFAIL src/x.test.ts > adds numbers"
      ])
      assert.strictEqual(page.nextOffset, 1002)
      const hits = yield* inRun(retrieveToolOutput({ artifactId, offset: 1, limit: 10, grep: "^FAIL" })).pipe(Effect.provide(toolsLayer(root)))
      assert.deepStrictEqual(hits.text.split("\n").slice(1), ["1001\tFAIL src/x.test.ts > adds numbers"])
    }))

  it.effect("context_budget_stats counts on across a restart: the counters belong to the session, in kern.db", () =>
    Effect.gen(function*() {
      const root = makeWorkspace()
      // The first process compacts two outputs of session s and sees one repeat.
      yield* Effect.gen(function*() {
        yield* compactToolOutput({ sessionId: "s", toolId: "bash", text: bigOutput(), isError: false })
        yield* compactToolOutput({ sessionId: "s", toolId: "grep", text: `${bigOutput()}\nmore`, isError: false })
        yield* compactToolOutput({ sessionId: "s", toolId: "grep", text: `${bigOutput()}\nmore`, isError: false })
        yield* Effect.flatMap(ContextStats, (counters) => counters.setActiveContextTokens("s", 4_321))
      }).pipe(Effect.provide(toolsLayer(root)))
      // A second process on the same folder and session reports them.
      const later = yield* contextBudgetStats({}).pipe(inSession("s"), Effect.provide(toolsLayer(root)))
      assert.strictEqual(later.compactions, 2)
      assert.strictEqual(later.duplicates, 1)
      assert.strictEqual(later.activeContextTokens, 4_321)
      assert.isAbove(later.savedByCompactionBytes, 0)
      const other = yield* contextBudgetStats({}).pipe(inSession("t"), Effect.provide(toolsLayer(root)))
      assert.strictEqual(other.compactions, 0)
    }))
})
