// One edit through the tool handler (per-file lock across processes, read-before-write check against kern.db, the
// hash re-check before the rename) against a bare atomicWrite of the same bytes: what the guarantees cost.
import { NodeContext } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { performance } from "node:perf_hooks"
import * as Database from "../../src/storage/Database.js"
import { atomicWrite } from "../../src/storage/atomicWrite.js"
import { edit } from "../../src/tools/edit.js"
import { read } from "../../src/tools/read.js"
import * as ToolServices from "../../src/tools/ToolServices.js"
import { ToolSession } from "../../src/tools/ToolSession.js"
import type { Bench } from "./bench.js"

const rounds = 300
const body = Array.from({ length: 200 }, (_, i) => `line ${i}: ${"x".repeat(60)}`).join("\n") + "\n"

const measure = (root: string) => {
  const layer = ToolServices.layerTest(root).pipe(
    Layer.provideMerge(Database.layer({ filename: NodePath.join(root, ".kern", "kern.db") })),
    Layer.provideMerge(NodeContext.layer)
  )
  return Effect.runPromise(Effect.gen(function*() {
    const target = NodePath.join(root, "file.md")
    yield* read({ path: "file.md", offset: 1, limit: 10 })
    const samples: Array<number> = []
    const baseline: Array<number> = []
    for (let i = 0; i < rounds; i++) {
      const from = i % 2 === 0 ? "line 7:" : "LINE 7:"
      const to = i % 2 === 0 ? "LINE 7:" : "line 7:"
      let start = performance.now()
      yield* edit({ path: "file.md", oldString: from, newString: to, replaceAll: false })
      samples.push(performance.now() - start)
      const bytes = NodeFs.readFileSync(target)
      start = performance.now()
      yield* atomicWrite(NodePath.join(root, "other.md"), bytes)
      baseline.push(performance.now() - start)
    }
    return { samples, baseline }
  }).pipe(Effect.provideService(ToolSession, { sessionId: "bench" }), Effect.scoped, Effect.provide(layer)))
}

export const benches: ReadonlyArray<Bench> = [
  {
    name: "tools.edit",
    unit: "ms per edit",
    run: async () => {
      const root = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "kern-bench-edit-"))
      try {
        NodeFs.writeFileSync(NodePath.join(root, "file.md"), body)
        return await measure(root)
      } finally {
        NodeFs.rmSync(root, { recursive: true, force: true })
      }
    }
  }
]
