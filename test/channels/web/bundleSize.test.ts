import { describe, expect, it } from "@effect/vitest"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { gzipSync } from "node:zlib"
import { testDist } from "../../support/build.js"

// README's figure for the web UI's size stays true: the built script and stylesheet (globalSetup built them), gzipped
// as a server or proxy would send them, within a few kB of what README says.

const tolerance = 3

const readmeFigure = (): number | undefined => {
  const readme = NodeFs.readFileSync(NodePath.resolve(import.meta.dirname, "../../../README.md"), "utf8")
  const match = /about (\d+) kB gzipped in all/.exec(readme)
  return match === null ? undefined : Number(match[1])
}

describe("the web UI's bundle", () => {
  it("is as large, gzipped, as README says (within a few kB)", () => {
    const assets = NodePath.join(testDist, "web", "assets")
    const bytes = ["app.js", "app.css"]
      .map((name) => gzipSync(NodeFs.readFileSync(NodePath.join(assets, name))).length)
      .reduce((a, b) => a + b, 0)
    const kB = bytes / 1000
    const figure = readmeFigure()
    expect(figure, "README's Web UI section says \"about N kB gzipped in all\"").toBeDefined()
    expect(Math.abs(kB - (figure ?? 0)), `the bundle is ${kB.toFixed(1)} kB gzipped; README says about ${figure} kB`).toBeLessThanOrEqual(tolerance)
  })
})
