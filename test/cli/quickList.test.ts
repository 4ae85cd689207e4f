import { describe, expect, it } from "@effect/vitest"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { parseListArgs } from "../../src/quick.js"
import { initAgentFolder } from "../support/agentFolder.js"
import { testDist } from "../support/build.js"
import { partialBuild } from "../support/buildCopy.js"
import { runCollected, runKern } from "../support/cli.js"
import { writeSessionFixture } from "../support/sessionFixture.js"

/** The full command line (the test build's dist/main.cjs), which every `kern` command but the quick listing starts from. */
const runFull = (args: ReadonlyArray<string>, cwd: string) =>
  runCollected(process.execPath, [NodePath.join(testDist, "main.cjs"), ...args], { cwd })

/** bin/kern.js and dist/quick.cjs (with the kept listing's dist/quickSessionsAsk.cjs) alone. */
const quickOnlyCopy = () => {
  const copy = partialBuild("kern-quick-", ["quick.cjs", "quickSessionsAsk.cjs"])
  return { bin: copy.bin, cacheFile: NodePath.join(copy.dist, "quick.cjs.v8cache"), remove: copy.remove }
}

describe("kern sessions list from its own bundle", () => {
  it("answers exactly as the full command line, for every form it takes and every form it hands back", async () => {
    const dir = initAgentFolder()
    writeSessionFixture(dir, 40)
    const parent = NodePath.dirname(dir)
    const name = NodePath.basename(dir)
    const cases: ReadonlyArray<ReadonlyArray<string>> = [
      [name],
      ["--dir", name],
      [name, "--json"],
      ["--json", "--dir", name],
      [name, "--dir", name],
      [name, "--dir", "elsewhere"],
      [name, "--conversation", "main", "--json"],
      ["missing-folder"],
      // Handed to the full command line:
      ["--help"],
      [name, "--bogus"],
      [name, "--json", "--json"],
      ["--dir"],
      [name, "other"],
      [name, "--conversation"]
    ]
    // 28 processes: three cases (six of them) at a time, so that a busy machine's slowness is not multiplied by 28.
    for (let start = 0; start < cases.length; start += 3) {
      await Promise.all(cases.slice(start, start + 3).map(async (args) => {
        const [quick, full] = await Promise.all([
          runKern(["sessions", "list", ...args], { cwd: parent }),
          runFull(["sessions", "list", ...args], parent)
        ])
        expect({ args, ...quick }).toEqual({ args, ...full })
      }))
    }
    const listed = JSON.parse((await runKern(["sessions", "list", "--json", dir])).stdout)
    expect(listed).toMatchObject([{ id: "20261122-100000-000-beef", messages: 40, active: true }])
    // Not an agent folder and two folders are usage errors (2), as everywhere.
    expect((await runKern(["sessions", "list", "missing-folder"], { cwd: parent })).status).toBe(2)
    expect((await runKern(["sessions", "list", name, "--dir", "elsewhere"], { cwd: parent })).stderr).toContain("two folders given")
  }, 300_000)

  it("runs without the full command line, writes its code cache, and replaces a damaged one", async () => {
    const dir = initAgentFolder()
    writeSessionFixture(dir, 12)
    const copy = quickOnlyCopy()
    try {
      const list = (args: ReadonlyArray<string>) =>
        runCollected(process.execPath, [copy.bin, "sessions", "list", ...args])
      const first = await list([dir])
      expect(first.stderr).toBe("")
      expect(first.stdout).toContain("20261122-100000-000-beef")
      expect(first.stdout).toMatch(/\b12\b/)
      const written = NodeFs.readFileSync(copy.cacheFile)
      expect(written.length).toBeGreaterThan(1000)

      NodeFs.writeFileSync(copy.cacheFile, "not a code cache")
      const second = await list([dir, "--json"])
      expect(JSON.parse(second.stdout)).toMatchObject([{ messages: 12 }])
      expect(NodeFs.readFileSync(copy.cacheFile).length).toBeGreaterThan(1000)

      // The database code (kern.db for the users' names) is a bundle of its own, loaded only when a listing needs it:
      // in quick.cjs it would be parsed by every listing.
      const bundle = NodeFs.readFileSync(NodePath.join(testDist, "quick.cjs"), "utf8")
      for (const databaseCode of ["better-sqlite3", "sqlite-vec", "kern_migrations", "msgpackr"]) expect(bundle).not.toContain(databaseCode)
      expect(NodeFs.readFileSync(NodePath.join(testDist, "quickNames.cjs"), "utf8")).toContain("better-sqlite3")

      // What the bundle does not take goes to dist/main.cjs, which this copy lacks.
      const help = await list(["--help"])
      expect(help.status).toBe(1)
      expect(help.stderr).toContain("the build is missing")
    } finally {
      copy.remove()
    }
  })

  it("takes only `[dir] [--dir <dir>] [--json] [--conversation <id>]`", () => {
    expect(parseListArgs([])).toMatchObject({ json: false })
    expect(parseListArgs(["a", "--json"])).toMatchObject({ dir: { _tag: "Some", value: "a" }, json: true })
    expect(parseListArgs(["--dir", "a", "a"])).toMatchObject({ dir: { value: "a" }, dirFlag: { value: "a" } })
    expect(parseListArgs(["--conversation", "telegram-555", "a"])).toMatchObject({ dir: { value: "a" }, conversation: { value: "telegram-555" } })
    // Two folders is a usage mistake the full command line explains, with the usage.
    for (const declined of [["--dir", "b", "a"], ["-h"], ["--dir"], ["--dir", "--json"], ["--dir=a"], ["a", "b"], ["--json", "--json"], ["--log-level", "debug"], ["--wizard"], ["--conversation"], ["--conversation", "--json"], ["--conversation", "a", "--conversation", "b"]]) {
      expect(parseListArgs(declined)).toBeUndefined()
    }
  })
})
