import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { contextForTask } from "../../src/tools/contextForTask.js"
import { summarizeFileStructure } from "../../src/tools/summarizeFileStructure.js"
import { taskKeywords } from "../../src/tools/taskContext.js"
import { makeWorkspace, toolsLayer } from "./support.js"

const files = {
  "src/billing/invoice.ts": "export class InvoiceBuilder {\n  addLine(item: string) {\n    return item\n  }\n}\n" +
    "export function renderInvoice(total: number) {\n  return `invoice total ${total}`\n}\n",
  "src/billing/tax.py": "def compute_tax(amount):\n    return amount * 0.2\n\nclass TaxTable:\n    def rate(self):\n        return 0.2\n",
  "notes/2026-01-02.md": "# Notes\n## Invoice bug\nThe invoice total is wrong when tax is zero.\n",
  "README.md": "# Shop\nNothing about billing here.\n",
  "unrelated.txt": "weather is fine\n"
}

describe("summarize_file_structure", () => {
  it.effect("outlines a TypeScript, a Python and a Markdown file", () =>
    Effect.gen(function*() {
      const root = makeWorkspace(files)
      const layer = toolsLayer(root, {}, { memoryDb: true })
      const ts = yield* summarizeFileStructure({ path: "src/billing/invoice.ts" }).pipe(Effect.provide(layer))
      assert.deepStrictEqual(ts.text.split("\n").slice(1), ["1  class InvoiceBuilder", "2    method addLine", "6  function renderInvoice"])
      const py = yield* summarizeFileStructure({ path: "src/billing/tax.py" }).pipe(Effect.provide(layer))
      assert.deepStrictEqual(py.text.split("\n").slice(1), ["1  def compute_tax", "4  class TaxTable", "5    def rate"])
      const md = yield* summarizeFileStructure({ path: "notes/2026-01-02.md" }).pipe(Effect.provide(layer))
      assert.strictEqual(md.symbols, 2)
      const error = yield* summarizeFileStructure({ path: "missing.ts" }).pipe(Effect.provide(layer), Effect.flip)
      assert.strictEqual(error.code, "NOT_FOUND")
    }))
})

describe("context_for_task", () => {
  it("keywords drop stop words and short words", () => {
    assert.deepStrictEqual(taskKeywords("Fix the invoice total when tax is 0"), ["invoice", "total", "tax"])
  })

  it.effect("ranks files by relevance and bundles outlines and excerpts within the budget", () =>
    Effect.gen(function*() {
      const root = makeWorkspace(files)
      const out = yield* contextForTask({ task: "invoice total wrong when tax is zero", budgetBytes: 4000 }).pipe(
        Effect.provide(toolsLayer(root, {}, { memoryDb: true }))
      )
      assert.deepStrictEqual(out.files.map((file) => file.path).slice(0, 2), ["src/billing/invoice.ts", "notes/2026-01-02.md"])
      assert.notInclude(out.files.map((file) => file.path), "unrelated.txt")
      assert.include(out.text, "class InvoiceBuilder")
      assert.include(out.text, "3: The invoice total is wrong when tax is zero.")
      assert.isTrue(out.bytes <= 4000)
    }))

  it.effect("a tiny budget still stays within it", () =>
    Effect.gen(function*() {
      const big: Record<string, string> = {}
      for (let i = 0; i < 20; i++) big[`f${i}.md`] = `invoice line\n`.repeat(50)
      const root = makeWorkspace(big)
      const out = yield* contextForTask({ task: "invoice", budgetBytes: 500 }).pipe(Effect.provide(toolsLayer(root, {}, { memoryDb: true })))
      assert.isTrue(out.bytes <= 500, `${out.bytes} bytes`)
      assert.isTrue(out.files.length >= 1)
    }))
})
