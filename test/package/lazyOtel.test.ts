import { describe, expect, it } from "@effect/vitest"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { testDist } from "../support/build.js"
import { bundleModules, evaluatedWithout, lazilyImported } from "../support/moduleGraph.js"

// OpenTelemetry export costs nothing when it is off: @effect/opentelemetry is evaluated only through
// src/runtime/otelExport.ts, which src/runtime/telemetry.ts imports lazily once a collector is configured. These checks
// read the module graph of the test build's full CLI (dist/main.cjs).

// A Context tag key is a string, so it survives minification: it names the exporter's serialization.
const marker = "@effect/opentelemetry/OtlpSerialization"
const modules = bundleModules("main")
const otel = (path: string) => path.startsWith("node_modules/@effect/opentelemetry/")
const exporterModule = "src/runtime/otelExport.ts"

describe("the built kern evaluates @effect/opentelemetry only when export is on", () => {
  it("no module evaluated from main.ts is of it unless through the lazy exporter module", () => {
    const evaluated = evaluatedWithout(modules, "src/main.ts", (path) => path === exporterModule)
    // The walk reaches the commands that run turns (chat, run) and status.
    for (const command of ["chat", "run", "status"]) expect(evaluated.has(`src/cli/${command}.ts`), command).toBe(true)
    expect([...evaluated].filter(otel)).toEqual([])
  })

  it("the exporter module is what brings it in, and something imports it lazily", () => {
    expect(lazilyImported(modules).has(exporterModule)).toBe(true)
    const holders = Object.keys(modules).filter(otel)
    expect(holders.length).toBeGreaterThan(0)
    const reachable = evaluatedWithout(modules, exporterModule, () => false)
    for (const holder of holders) expect(reachable.has(holder), holder).toBe(true)
  })

  it("the quick bundles (chat through a running agent, status, help) hold none of it", () => {
    for (const name of ["quickChat", "quickStatus"]) {
      expect(Object.keys(bundleModules(name)).filter((file) => otel(file) || file === exporterModule), name).toEqual([])
    }
    for (const file of ["quick.cjs", "quickHelp.cjs", "quickChat.cjs", "quickStatus.cjs"]) {
      expect(NodeFs.readFileSync(NodePath.join(testDist, file), "utf8").includes(marker), file).toBe(false)
    }
  })
})
