import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { sessionsCacheFile, sessionsKey } from "../../src/quick/sessionsCache.js"
import { initAgentFolder } from "../support/agentFolder.js"
import { testDist } from "../support/build.js"
import { kernBin, runCollected } from "../support/cli.js"
import { bundleMarker, fineStampsHere, kernFiles, markedRun, settleByClock } from "../support/keptOutputs.js"
import { writeSessionFixture } from "../support/sessionFixture.js"
import { makeTempDir } from "../support/tempDir.js"

// `kern sessions list` prints the listing the last ask kept (src/quick/sessionsCache.ts) while nothing it read has
// changed. Over a corpus of folder states, each reached from the last by one change, the kept path's answer (stdout,
// stderr, exit code) is the listing made again with no cache, and the full command line's (dist/main.cjs); once a state
// has settled, the next ask is answered from the cache alone (dist/quick.cjs not loaded), which proves the corpus
// exercises it.

/** A preload that says, at exit, whether the listing's bundle was read. */
const preload = bundleMarker("quick.cjs")

interface Ask {
  readonly args: ReadonlyArray<string>
  readonly env?: Record<string, string>
  readonly cwd?: string
}

/** `kern sessions list` as a user runs it, and whether the listing's bundle ran. */
const list = async (ask: Ask) =>
  markedRun(
    await runCollected(process.execPath, ["--require", preload, kernBin, "sessions", "list", ...ask.args], {
      env: ask.env ?? {},
      ...(ask.cwd === undefined ? {} : { cwd: ask.cwd })
    })
  )

/** The full command line's listing (dist/main.cjs), which never reads or writes the cache. */
const listFull = async (ask: Ask) => {
  const result = await runCollected(process.execPath, [NodePath.join(testDist, "main.cjs"), "sessions", "list", ...ask.args], {
    env: ask.env ?? {},
    ...(ask.cwd === undefined ? {} : { cwd: ask.cwd })
  })
  return { status: result.status, stdout: result.stdout, stderr: result.stderr }
}

/** Every file below .kern changed in the last minute as changed a minute ago: settled, whatever the file system's stamps. */
const settle = (dir: string) => {
  const now = Date.now()
  const past = new Date(now - 60_000)
  for (const file of kernFiles(dir)) {
    if (NodeFs.statSync(file).mtimeMs > now - 59_000) NodeFs.utimesSync(file, past, past)
  }
}

/**
 * Settled by backdating, for a listing that then has nothing to count again: backdating a session makes its count
 * record stale, so one listing writes it again, and that record is backdated in turn.
 */
const settleListed = async (dir: string, ask: Ask) => {
  settle(dir)
  await list(ask)
  settle(dir)
}

const configFile = (dir: string) => NodePath.join(dir, ".kern", "config.json")

/**
 * One state of the corpus: the ask made with whatever the last state kept must equal the listing made with no cache
 * and the full command line's; then, settled, the next ask is the cache's (when `kept`) and equal again.
 */
const check = async (name: string, ask: Ask, dir: string, kept: boolean, settling: "backdated" | "by the clock") => {
  const withCache = await list(ask)
  NodeFs.rmSync(sessionsCacheFile(dir), { force: true })
  const fresh = await list(ask)
  expect(fresh.full, name).toBe(true)
  expect(withCache.seen, name).toEqual(fresh.seen)
  expect(await listFull(ask), name).toEqual(fresh.seen)
  // The first listing of a changed session writes its count record: the folder settles again after it.
  if (settling === "backdated") settle(dir)
  else await settleByClock(dir)
  await list(ask)
  const again = await list(ask)
  expect(again.seen, name).toEqual(fresh.seen)
  expect(again.full, `${name}: ${kept ? "answered from the cache" : "made again"}`).toBe(!kept)
  return fresh.seen
}

type Step = (name: string, change: () => void, options?: { readonly ask?: Ask; readonly kept?: boolean }) => Promise<void>

const corpus = async (settling: "backdated" | "by the clock") => {
  const dir = initAgentFolder()
  const ask: Ask = { args: [dir] }
  const outputs = new Set<string>()
  const step: Step = async (name, change, options = {}) => {
    change()
    if (settling === "backdated") settle(dir)
    else await settleByClock(dir)
    const seen = await check(name, options.ask ?? ask, dir, options.kept ?? true, settling)
    outputs.add(`${seen.status}\n${seen.stdout}\n${seen.stderr}`)
  }
  const sessions = NodePath.join(dir, ".kern", "sessions")
  const counts = NodePath.join(dir, ".kern", "session-counts")
  await step("a fresh folder, no sessions", () => {})
  await step("--json", () => {}, { ask: { args: [dir, "--json"] } })
  await step("a session", () => void writeSessionFixture(dir, 3))
  await step("the session grew", () => void writeSessionFixture(dir, 5))
  await step("another session", () => void writeSessionFixture(dir, 2, "20261123-100000-000-cafe"))
  await step("--conversation main, --json", () => {}, { ask: { args: [dir, "--conversation", "main", "--json"] } })
  await step("--conversation with no sessions", () => {}, { ask: { args: [dir, "--conversation", "telegram-555"] } })
  await step("a count record gone", () => NodeFs.rmSync(NodePath.join(counts, "20261123-100000-000-cafe.json")))
  await step("a count record that lies (kern counts the file again)", () => {
    const file = NodePath.join(counts, "20261122-100000-000-beef.json")
    NodeFs.writeFileSync(file, NodeFs.readFileSync(file, "utf8").replace(/"messages":\d+/, "\"messages\":999"))
  })
  await step("a session file rewritten at the same size", () => {
    const file = NodePath.join(sessions, "20261123-100000-000-cafe.jsonl")
    const text = NodeFs.readFileSync(file, "utf8")
    NodeFs.writeFileSync(file, text)
  })
  await step("a stray file beside the sessions", () => NodeFs.writeFileSync(NodePath.join(sessions, "notes.txt"), "x"))
  await step("a session of another conversation: the names come from the database", () =>
    void writeSessionFixture(dir, 2, "20261124-100000-000-dada_telegram-555"), { kept: false })
  await step("that session gone", () => NodeFs.rmSync(NodePath.join(sessions, "20261124-100000-000-dada_telegram-555.jsonl")))
  await step("config: an unknown key", () => NodeFs.writeFileSync(configFile(dir), JSON.stringify({ colour: "blue" })))
  await step("config: malformed JSON", () => NodeFs.writeFileSync(configFile(dir), "{ \"model\": "), { kept: false })
  await step("config: a bad value", () => NodeFs.writeFileSync(configFile(dir), JSON.stringify({ heartbeatInterval: "often" })), { kept: false })
  await step("config: back to valid", () => NodeFs.writeFileSync(configFile(dir), "{}"))
  await step("the environment: a KERN_ override that is malformed", () => {}, { ask: { args: [dir], env: { KERN_PORT: "lots" } }, kept: false })
  await step("the folder named from its parent", () => {}, { ask: { args: [NodePath.basename(dir)], cwd: NodePath.dirname(dir) } })
  await step("the folder as --dir", () => {}, { ask: { args: ["--dir", dir] } })
  await step("config.json gone: not an agent folder", () => NodeFs.rmSync(configFile(dir)), { kept: false })
  // The states differ: the corpus is not one output asked again and again.
  expect(outputs.size).toBeGreaterThanOrEqual(10)
}

describe("kern sessions list: the listing kept for the next ask", () => {
  it.live("corpus: the kept answer is always the listing made again, and the full command line's", () =>
    Effect.promise(() => corpus("backdated")), 300_000)

  // The short settle: each state asked as soon as its files are 100 ms old, with the stamps their changes gave them.
  it.live.skipIf(!fineStampsHere)("corpus, settled by the clock (100 ms): the kept answer is always the listing made again", () =>
    Effect.promise(() => corpus("by the clock")), 300_000)

  it.live.skipIf(!fineStampsHere)("a session appended to just after a kept ask, at the same size or not, is listed anew", () =>
    Effect.promise(async () => {
      const dir = initAgentFolder()
      const session = writeSessionFixture(dir, 4)
      const ask: Ask = { args: [dir] }
      await list(ask)
      for (const round of [1, 2, 3]) {
        await settleByClock(dir)
        NodeFs.rmSync(sessionsCacheFile(dir), { force: true })
        const made = await list(ask)
        const kept = await list(ask)
        expect(made.full, `round ${round}`).toBe(true)
        expect(kept.full, `round ${round}: kept after 100 ms`).toBe(false)
        expect(kept.seen).toEqual(made.seen)
        // At once: a line appended, as a running agent appends one.
        NodeFs.appendFileSync(session, NodeFs.readFileSync(session, "utf8").split("\n").at(-2)! + "\n")
        const next = await list(ask)
        expect(next.full, `round ${round}: the change is seen`).toBe(true)
        expect(next.seen.stdout).not.toEqual(kept.seen.stdout)
        expect(next.seen.stdout).toContain(String(4 + round))
      }
    }), 120_000)

  it.live("the cache file: private, the environment only as a digest, and anything in it that is not a listing kern made is made again", () =>
    Effect.promise(async () => {
      const dir = initAgentFolder()
      writeSessionFixture(dir, 3)
      const ask: Ask = { args: [dir], env: { KERN_AUTH_TOKEN: "secret-token-value" } }
      await settleListed(dir, ask)
      expect((await list(ask)).full).toBe(true)
      const kept = await list(ask)
      expect(kept.full).toBe(false)
      const cache = sessionsCacheFile(dir)
      expect(NodeFs.statSync(cache).mode & 0o777).toBe(0o600)
      expect(NodeFs.readFileSync(cache, "utf8")).not.toContain("secret-token-value")
      const entries = (JSON.parse(NodeFs.readFileSync(cache, "utf8")) as { entries: Array<Record<string, unknown>> }).entries
      expect(entries).toHaveLength(1)
      // An entry under the right key whose output holds terminal controls: no listing kern makes.
      for (const stdout of ["session \u001b]52;c;aGk=\u0007", "a\rb", "\u202e"]) {
        NodeFs.writeFileSync(cache, JSON.stringify({ entries: [{ ...entries[0], stdout }] }))
        const hostile = await list(ask)
        expect(hostile.full).toBe(true)
        expect(hostile.seen).toEqual(kept.seen)
      }
      // A cache that is no JSON, or not its shape: made again, and kept anew.
      for (const text of ["not json", "[]", "{\"entries\": {}}", "{\"entries\": [{\"key\": 1}]}"]) {
        NodeFs.writeFileSync(cache, text)
        expect((await list(ask)).full).toBe(true)
        expect((await list(ask)).full).toBe(false)
      }
      // Another build of kern keeps its own: the key names the listing's bundle.
      const other = sessionsKey({ dir, json: false, conversation: undefined, env: {}, bundle: NodePath.join(makeTempDir(), "quick.cjs") })
      const ours = sessionsKey({ dir, json: false, conversation: undefined, env: {}, bundle: NodePath.join(testDist, "quick.cjs") })
      expect(other?.key).not.toBe(ours?.key)
    }), 120_000)

  it.live("a kept listing is written as the listing writes it: to a file, and to a reader gone (141, quietly)", () =>
    Effect.promise(async () => {
      const dir = initAgentFolder()
      writeSessionFixture(dir, 3)
      await settleListed(dir, { args: [dir] })
      const fresh = await list({ args: [dir] })
      const kept = await list({ args: [dir] })
      expect(kept.full).toBe(false)
      expect(kept.seen).toEqual(fresh.seen)
      const file = NodePath.join(makeTempDir(), "out.txt")
      const out = NodeFs.openSync(file, "w")
      const toFile = spawnSync(process.execPath, ["--require", preload, kernBin, "sessions", "list", dir], { env: {}, stdio: ["ignore", out, "pipe"], encoding: "utf8" })
      NodeFs.closeSync(out)
      expect(toFile.stderr).toContain("@kept")
      expect(toFile.status).toBe(0)
      expect(NodeFs.readFileSync(file, "utf8")).toBe(kept.seen.stdout)
      const closed = await runCollected(process.execPath, ["--require", preload, kernBin, "sessions", "list", dir], {
        env: {},
        stuckAfterMs: 100_000,
        onSpawn: (child) => void child.stdout?.destroy()
      })
      expect(closed.stderr).toContain("@kept")
      expect(closed.stderr).not.toMatch(/EPIPE|Error:|\n\s+at /)
      expect(closed.status).toBe(141)
    }), 120_000)
})
