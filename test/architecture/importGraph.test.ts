import { assert, describe, it } from "@effect/vitest"
import * as NodeChildProcess from "node:child_process"
import * as NodePath from "node:path"
import { check, describe as describeResult, readGraph } from "../../scripts/importGraph.mjs"
import { makeTempDir, writeFiles } from "../support/tempDir.js"

const script = NodePath.join(import.meta.dirname, "..", "..", "scripts", "importGraph.mjs")
const src = NodePath.join(import.meta.dirname, "..", "..", "src")

const order = [["low"], ["left", "right"], ["high"], ["."]]

const tree = (files: Readonly<Record<string, string>>): string => {
  const root = makeTempDir("kern-imports-")
  writeFiles(root, files)
  return root
}

const clean = {
  "low/base.ts": "export const base = 1\n",
  "left/a.ts": "import { base } from \"../low/base.js\"\nexport const a = base\n",
  "right/b.ts": "import type { a } from \"../left/a.js\"\nexport const b = 2\n",
  "high/top.ts": [
    "import { b } from \"../right/b.js\"",
    "// import { top } from \"../high/top.js\" in a comment is no import",
    "const text = \"import x from '../high/top.js'\"",
    "const quote = /[\"']/",
    "export const top = () => import(\"../left/a.js\")",
    ""
  ].join("\n"),
  "main.ts": "export * from \"./high/top.js\"\n"
}

describe("importGraph", () => {
  it("passes a tree whose imports all point down or across one layer, ignoring comments, strings and regexes", () => {
    const graph = readGraph(tree({
      ...clean,
      "low/notes.ts": "// see \"../high/top.js\"\nconst s = `import(\"../high/top.js\") ${\"x\"}`\nexport const n = /['\"]/.test(s)\n"
    }))
    const result = check(graph, order)
    assert.isTrue(result.ok, describeResult(result, order))
    assert.deepStrictEqual(
      graph.edges.filter((edge) => edge.from === "high/top.ts").map((edge) => edge.to),
      ["right/b.ts", "left/a.ts"]
    )
  })

  it("reports an upward import, static, type-only, re-exported or dynamic, with its file and line", () => {
    for (const [form, line] of [
      ["import { top } from \"../high/top.js\"", 2],
      ["import type { top } from \"../high/top.js\"", 2],
      ["export { top } from \"../high/top.js\"", 2],
      ["export const later = () => import(\"../high/top.js\")", 2],
      ["export type Top = typeof import(\"../high/top.js\").top", 2]
    ] as const) {
      const result = check(readGraph(tree({ ...clean, "low/base.ts": `export const base = 1\n${form}\n` })), order)
      assert.isFalse(result.ok, form)
      assert.deepStrictEqual(
        result.upward.map((edge) => [edge.from, edge.to, edge.line, edge.fromFolder, edge.toFolder]),
        [["low/base.ts", "high/top.ts", line, "low", "high"]],
        form
      )
      // The upward import closes a cycle (high → right → left → low → high), reported with the imports that are not
      // downward: the upward one and the one across the middle layer.
      assert.deepStrictEqual(result.cycles.map((cycle) => cycle.folders), [["high", "left", "low", "right"]], form)
      assert.deepStrictEqual(result.cycles[0]?.edges.map((edge) => edge.from), ["low/base.ts", "right/b.ts"], form)
    }
  })

  it("reports two folders of one layer that import each other", () => {
    const result = check(readGraph(tree({ ...clean, "left/back.ts": "export * from \"../right/b.js\"\n" })), order)
    assert.isFalse(result.ok)
    assert.deepStrictEqual(result.upward, [])
    assert.deepStrictEqual(result.cycles.map((cycle) => cycle.folders), [["left", "right"]])
    assert.deepStrictEqual(
      result.cycles[0]?.edges.map((edge) => `${edge.from} → ${edge.to}`).sort(),
      ["left/back.ts → right/b.ts", "right/b.ts → left/a.ts"]
    )
    assert.include(describeResult(result, order), "folder cycle: left ↔ right")
  })

  it("reports a folder that has no layer, and leaves an excluded folder out", () => {
    const files = { ...clean, "extra/x.ts": "export const x = 1\n", "low/ui/view.ts": "import { top } from \"../../high/top.js\"\n" }
    const unplaced = check(readGraph(tree(files), { excluded: ["low/ui"] }), order)
    assert.deepStrictEqual(unplaced.unplaced, ["extra"])
    assert.deepStrictEqual(unplaced.upward, [])
    assert.include(describeResult(unplaced, order), "unplaced folder: src/extra")
    const included = check(readGraph(tree(files), { excluded: [] }), order)
    assert.deepStrictEqual(included.upward.map((edge) => edge.from), ["low/ui/view.ts"])
  })

  it("exits 1 naming the import on a violation, 0 on a clean tree (what npm run check relies on)", () => {
    const run = (root: string) => NodeChildProcess.spawnSync(process.execPath, [script, root], { encoding: "utf8" })
    const bad = run(tree({ "config/a.ts": "import { b } from \"../cli/b.js\"\n", "cli/b.ts": "export const b = 1\n" }))
    assert.strictEqual(bad.status, 1, bad.stderr)
    assert.include(bad.stderr, "upward import (config → cli): src/config/a.ts:1 → src/cli/b.ts")
    const good = run(tree({ "config/a.ts": "export const a = 1\n", "cli/b.ts": "import { a } from \"../config/a.js\"\n" }))
    assert.strictEqual(good.status, 0, good.stderr)
  })

  it("kern's own src has no upward import, folder cycle or unplaced folder", () => {
    const result = check(readGraph(src))
    assert.isTrue(result.ok, describeResult(result))
  })
})
