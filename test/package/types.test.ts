import { describe, expect, it } from "@effect/vitest"
import * as NodeFs from "node:fs"
import { createRequire } from "node:module"
import * as NodePath from "node:path"
import { runCollected } from "../support/cli.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"

const root = NodePath.resolve(import.meta.dirname, "../..")
const pkg = JSON.parse(NodeFs.readFileSync(NodePath.join(root, "package.json"), "utf8"))
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc")

/** An app that depends on kern (linked into its node_modules as npm would) and type-checks one file against it. */
const typeCheck = (source: string) => {
  const app = makeTempDir("kern-consumer-")
  NodeFs.mkdirSync(NodePath.join(app, "node_modules"))
  NodeFs.symlinkSync(root, NodePath.join(app, "node_modules", "kern"))
  NodeFs.symlinkSync(NodePath.join(root, "node_modules", "effect"), NodePath.join(app, "node_modules", "effect"))
  writeFiles(app, {
    "package.json": JSON.stringify({ type: "module" }),
    "tsconfig.json": JSON.stringify({
      compilerOptions: { module: "NodeNext", moduleResolution: "NodeNext", strict: true, noEmit: true, types: [], skipLibCheck: true, target: "ES2022" },
      files: ["app.ts"]
    }),
    "app.ts": source
  })
  return runCollected(process.execPath, [tsc, "-p", app])
}

describe("the package as an app installs it", () => {
  it("types and exports point at files the build writes", () => {
    for (const file of [pkg.types, pkg.exports["."].types, pkg.exports["."].import, pkg.main]) {
      expect(NodeFs.existsSync(NodePath.join(root, file)), `${file} exists`).toBe(true)
    }
  })

  it("an app importing kern gets real types: correct use checks, a wrong one is an error", async () => {
    const good = await typeCheck([
      "import { Effect } from \"effect\"",
      "import { AgentConfig, ToolFailure } from \"kern\"",
      "export const load: Effect.Effect<unknown, unknown, unknown> = AgentConfig.loadConfig(\".\")",
      "export const failure: ToolFailure = new ToolFailure({ code: \"TIMEOUT\", message: \"slow\", retryable: true })"
    ].join("\n"))
    expect(good.stdout + good.stderr).toBe("")
    expect(good.status).toBe(0)
    const bad = await typeCheck([
      "import { AgentConfig } from \"kern\"",
      "export const wrong: number = AgentConfig.loadConfig"
    ].join("\n"))
    expect(bad.status).not.toBe(0)
    expect(bad.stdout).toContain("TS2322")
  }, 240_000)
})
