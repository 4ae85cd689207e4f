import { describe, expect, it } from "@effect/vitest"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { testDist } from "../support/build.js"
import { chunks, importsOf, loadedWithout } from "../support/chunks.js"

// OpenTelemetry export costs nothing when it is off: @effect/opentelemetry is in a chunk of its own that only
// src/runtime/telemetry.ts imports, lazily, once a collector is configured. These checks read the test build.

// A Context tag key is a string, so it survives minification: it names the exporter's serialization.
const marker = "@effect/opentelemetry/OtlpSerialization"
const exporterChunk = (file: string) => /^otelExport-/.test(file)

describe("the built kern loads @effect/opentelemetry only when export is on", () => {
  it("no chunk reached from main.js holds it unless through the lazy exporter module", () => {
    const loaded = loadedWithout("main.js", exporterChunk)
    // The walk reaches the commands that run turns (chat, run) and status.
    expect([...loaded].filter((file) => /^(chat|run|status)-/.test(file))).toHaveLength(3)
    for (const file of loaded) expect(importsOf(file).source.includes(marker), `${file} holds ${marker}`).toBe(false)
  })

  it("the exporter module is what brings it in, and something imports it lazily", () => {
    const all = chunks()
    const lazy = all.filter(exporterChunk)
    expect(lazy).toHaveLength(1)
    expect(all.some((file) => importsOf(file).lazy.includes(lazy[0]!))).toBe(true)
    const reachable = loadedWithout(lazy[0]!, () => false)
    const holders = all.filter((file) => importsOf(file).source.includes(marker))
    expect(holders.length).toBeGreaterThan(0)
    for (const holder of holders) expect(reachable.has(holder), holder).toBe(true)
  })

  it("the quick bundles (chat through a running agent, status, help) hold none of it", () => {
    for (const name of ["quickChat", "quickStatus"]) {
      const meta = JSON.parse(NodeFs.readFileSync(NodePath.join(testDist, `${name}.meta.json`), "utf8")) as {
        readonly inputs: Record<string, unknown>
      }
      expect(Object.keys(meta.inputs).filter((file) => /@effect[/]opentelemetry|otelExport/.test(file)), name).toEqual([])
    }
    for (const file of ["quick.cjs", "quickHelp.cjs", "quickChat.cjs", "quickStatus.cjs"]) {
      expect(NodeFs.readFileSync(NodePath.join(testDist, file), "utf8").includes(marker), file).toBe(false)
    }
  })
})
