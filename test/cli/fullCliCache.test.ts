import { describe, expect, it } from "@effect/vitest"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { initAgentFolder } from "../support/agentFolder.js"
import { testDist } from "../support/build.js"
import { partialBuild } from "../support/buildCopy.js"
import { kernBin, runCollected } from "../support/cli.js"
import { makeTempDir } from "../support/tempDir.js"

// Every command but the quick ones runs the full CLI, one CommonJS bundle (dist/main.cjs) that bin/kern.js loads with
// a V8 code cache beside it (dist/main.cjs.v8cache): the build writes it, and V8 takes it only if it was made under the
// flags it is loaded under. A cache V8 refused would be compiled around and written again at every exit, slower than
// none. These checks run a copy of bin/kern.js and the full CLI, so no other test's kern touches its cache.

/** bin/kern.js, the full CLI and what its commands read beside it. */
const fullCliCopy = () => {
  const copy = partialBuild("kern-full-", ["main.cjs", "main.cjs.v8cache", "o200k_base.ranks"])
  return {
    run: (args: ReadonlyArray<string>) => runCollected(process.execPath, [copy.bin, ...args]),
    cacheFile: NodePath.join(copy.dist, "main.cjs.v8cache"),
    remove: copy.remove
  }
}

/** The same command line on the full CLI itself (node dist/main.cjs), with no loader and no cache. */
const runDirect = (args: ReadonlyArray<string>) => runCollected(process.execPath, [NodePath.join(testDist, "main.cjs"), ...args])

describe("the full CLI from its code-cached bundle", () => {
  it("takes the cache the build wrote, for a command that loads the tools and one that does not, and answers as without it", async () => {
    const dir = initAgentFolder()
    const copy = fullCliCopy()
    try {
      const built = NodeFs.readFileSync(copy.cacheFile)
      expect(built.length).toBeGreaterThan(100_000)
      // `kernel tools` loads the tools' regular-expression guard, which sets V8 flags as it loads: bin/kern.js sets them
      // before the bundle, so the cache written at exit fits the next start.
      for (const args of [["doctor", "--dir", dir], ["kernel", "tools", "--dir", dir], ["recall", "stats", "--dir", dir]]) {
        const viaBin = await copy.run(args)
        expect(viaBin.stdout.length, args.join(" ")).toBeGreaterThan(0)
        expect(viaBin, args.join(" ")).toEqual(await runDirect(args))
        expect(NodeFs.readFileSync(copy.cacheFile).equals(built), `${args.join(" ")} rewrote the cache`).toBe(true)
      }
    } finally {
      copy.remove()
    }
  }, 120_000)

  it("writes a missing cache, replaces a damaged one, and then keeps it", async () => {
    const dir = initAgentFolder()
    const copy = fullCliCopy()
    try {
      const args = ["kernel", "tools", "--dir", dir]
      const expected = await runDirect(args)
      NodeFs.rmSync(copy.cacheFile)
      expect(await copy.run(args)).toEqual(expected)
      const written = NodeFs.readFileSync(copy.cacheFile)
      expect(written.length).toBeGreaterThan(100_000)

      NodeFs.writeFileSync(copy.cacheFile, "not a code cache")
      expect(await copy.run(args)).toEqual(expected)
      const replaced = NodeFs.readFileSync(copy.cacheFile)
      expect(replaced.length).toBeGreaterThan(100_000)

      expect(await copy.run(args)).toEqual(expected)
      expect(NodeFs.readFileSync(copy.cacheFile).equals(replaced)).toBe(true)
    } finally {
      copy.remove()
    }
  }, 120_000)

  it("writes no cache for a bundle replaced while the process ran (V8 would take it for the new one of the same length)", async () => {
    const dir = makeTempDir("kern-code-cache-")
    const bundle = NodePath.join(dir, "bundle.cjs")
    const loader = NodePath.join(NodePath.dirname(kernBin), "codeCache.js")
    const run = (replace: boolean) => {
      NodeFs.writeFileSync(bundle, "module.exports = () => 'one'\n")
      NodeFs.rmSync(`${bundle}.v8cache`, { force: true })
      const script = `const { loadCached } = require(${JSON.stringify(loader)}); loadCached(${JSON.stringify(bundle)})(); ` +
        (replace ? `require("node:fs").writeFileSync(${JSON.stringify(bundle)}, "module.exports = () => 'two'\\n")` : "")
      return runCollected(process.execPath, ["-e", script])
    }
    expect(await run(false)).toMatchObject({ status: 0, stderr: "" })
    expect(NodeFs.existsSync(`${bundle}.v8cache`)).toBe(true)
    expect(await run(true)).toMatchObject({ status: 0, stderr: "" })
    expect(NodeFs.readFileSync(bundle, "utf8")).toContain("two")
    expect(NodeFs.existsSync(`${bundle}.v8cache`)).toBe(false)
  })

  it("holds a bundle's text once, outside V8's heap", async () => {
    // A bundle of 6 MB whose evaluation makes nothing large. Wrapping the text read as a string made V8 copy all of it
    // into its heap (large-object space) beside the text: 8 MB more for the full CLI in every process.
    const bundle = NodePath.join(makeTempDir(), "big.cjs")
    NodeFs.writeFileSync(bundle, `module.exports.run = () => "ran"\n/* ${"x".repeat(6_000_000)} */\n`)
    const script = [
      `const { loadCached, runtimeFlags } = require(${JSON.stringify(NodePath.join(NodePath.dirname(kernBin), "codeCache.js"))})`,
      "runtimeFlags()",
      "const largeObjects = () => require(\"node:v8\").getHeapSpaceStatistics().find((s) => s.space_name === \"large_object_space\").space_used_size",
      "const before = largeObjects()",
      `const loaded = loadCached(${JSON.stringify(bundle)})`,
      "console.log(JSON.stringify({ ran: loaded.run(), added: largeObjects() - before }))"
    ].join("; ")
    const result = await runCollected(process.execPath, ["-e", script])
    const answer = JSON.parse(result.stdout) as { readonly ran: string; readonly added: number }
    expect(answer.ran).toBe("ran")
    expect(answer.added).toBeLessThan(1_000_000)
  }, 60_000)
})
