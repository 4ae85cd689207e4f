import { describe, expect, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { pathToFileURL } from "node:url"
import { testDist } from "../support/build.js"
import { chunks, importsOf } from "../support/chunks.js"

// node's own fetch (its built-in copy of undici) is loaded by the first read of a web global such as `Headers`: 35–45
// ms and ~4 MiB. kern talks HTTP through the undici package, whose cookie helpers read `globalThis.Headers` when they
// are evaluated; the build drops that read (scripts/undiciGlobals.mjs). These checks load the test build.

const nodeUndici = "NativeModule internal/deps/undici/undici"

/** Whether node's built-in undici is loaded once `script` (an ES module) has run in a fresh node. */
const loadsNodeUndici = (script: string): boolean =>
  execFileSync(process.execPath, ["--input-type=module", "-e", `${script}; process.stdout.write(String(process.moduleLoadList.includes(${JSON.stringify(nodeUndici)})))`], {
    encoding: "utf8"
  }) === "true"

describe("loading the built kern does not load node's own fetch", () => {
  it("the bundles that hold the undici package are those the checks below load", () => {
    const holders = [...chunks(), "quickChatLocal.cjs"].filter((file) => importsOf(file).source.includes("brandCheckMultiple"))
    expect(holders.length).toBeGreaterThan(1)
    expect(holders).toContain("quickChatLocal.cjs")
  })

  it("the one-shot chat's bundle (dist/quickChatLocal.cjs)", () => {
    const bundle = NodePath.join(testDist, "quickChatLocal.cjs")
    expect(NodeFs.existsSync(bundle)).toBe(true)
    expect(loadsNodeUndici(`(await import("node:module")).createRequire(import.meta.url)(${JSON.stringify(bundle)})`)).toBe(false)
  })

  it("the library, and every chunk of the full CLI that holds undici", () => {
    const holders = chunks().filter((file) => importsOf(file).source.includes("brandCheckMultiple"))
    const imports = ["index.js", ...holders].map((file) => `await import(${JSON.stringify(pathToFileURL(NodePath.join(testDist, file)).href)})`)
    expect(loadsNodeUndici(imports.join("; "))).toBe(false)
  })

  it("a read of the global itself does load it (the check can see it)", () => {
    expect(loadsNodeUndici("globalThis.Headers")).toBe(true)
  })
})
