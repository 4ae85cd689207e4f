import { describe, expect, it } from "@effect/vitest"
import { execFileSync, spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { pathToFileURL } from "node:url"
import { testDist } from "../support/build.js"
import { chunks, importsOf } from "../support/chunks.js"
import { bundleModules, evaluatedWithout } from "../support/moduleGraph.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"

// node's own fetch (its built-in copy of undici) is loaded by the first read of a web global such as `Headers`: 35–45
// ms and ~4 MiB. kern talks HTTP through the undici package, whose cookie helpers read `globalThis.Headers` when they
// are evaluated; the build drops that read (scripts/undiciGlobals.mjs). These checks load the test build.

const nodeUndici = "NativeModule internal/deps/undici/undici"

/** Whether node's built-in undici is loaded once `script` (an ES module) has run in a fresh node. */
const loadsNodeUndici = (script: string): boolean =>
  execFileSync(process.execPath, ["--input-type=module", "-e", `${script}; process.stdout.write(String(process.moduleLoadList.includes(${JSON.stringify(nodeUndici)})))`], {
    encoding: "utf8"
  }) === "true"

/** Whether node's built-in undici was loaded by the time `args` (a node command line) exited. */
const runLoadsNodeUndici = (args: ReadonlyArray<string>): boolean => {
  const report = `process.on("exit", () => process.stderr.write("undici:" + process.moduleLoadList.includes(${JSON.stringify(nodeUndici)})))`
  const run = spawnSync(process.execPath, ["--import", `data:text/javascript,${encodeURIComponent(report)}`, ...args], { encoding: "utf8" })
  const said = /undici:(true|false)$/.exec(run.stderr)
  if (said === null) throw new Error(`no report from node ${args.join(" ")}: ${run.stderr}`)
  return said[1] === "true"
}

describe("loading the built kern does not load node's own fetch", () => {
  it("the bundles that hold the undici package are those the checks below load", () => {
    const holders = [...chunks(), "quickChatLocal.cjs", "main.cjs"].filter((file) => importsOf(file).source.includes("brandCheckMultiple"))
    expect(holders).toContain("quickChatLocal.cjs")
    expect(holders).toContain("main.cjs")
    expect(holders.filter((file) => file.endsWith(".js")).length).toBeGreaterThan(0)
  })

  it("the one-shot chat's bundle (dist/quickChatLocal.cjs)", () => {
    const bundle = NodePath.join(testDist, "quickChatLocal.cjs")
    expect(NodeFs.existsSync(bundle)).toBe(true)
    expect(loadsNodeUndici(`(await import("node:module")).createRequire(import.meta.url)(${JSON.stringify(bundle)})`)).toBe(false)
  })

  it("the full CLI (dist/main.cjs), running a command that evaluates the undici package", () => {
    // `kern status` evaluates kern's HTTP client (it asks a running agent), and with it the undici package.
    expect(evaluatedWithout(bundleModules("main"), "src/cli/status.ts", () => false).has("node_modules/undici/lib/web/cookies/index.js")).toBe(true)
    const dir = makeTempDir("kern-fetch-")
    writeFiles(dir, { ".kern/config.json": "{}\n" })
    expect(runLoadsNodeUndici([NodePath.join(testDist, "main.cjs"), "status", dir])).toBe(false)
  })

  it("the library, and every chunk of it that holds undici", () => {
    const holders = chunks().filter((file) => importsOf(file).source.includes("brandCheckMultiple"))
    const imports = ["index.js", ...holders].map((file) => `await import(${JSON.stringify(pathToFileURL(NodePath.join(testDist, file)).href)})`)
    expect(loadsNodeUndici(imports.join("; "))).toBe(false)
  })

  it("a read of the global itself does load it (the checks can see it)", () => {
    expect(loadsNodeUndici("globalThis.Headers")).toBe(true)
    expect(runLoadsNodeUndici(["-e", "globalThis.Headers"])).toBe(true)
  })
})
