import { describe, expect, it } from "@effect/vitest"
import Sqlite from "better-sqlite3"
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { nextSpendDayMs, spendDayIn } from "../../src/model/spendCaps.js"
import { askKey, statusCacheFile } from "../../src/quick/statusCache.js"
import { initAgentWithModel } from "../support/agentFolder.js"
import { kernBin, runCollected } from "../support/cli.js"
import { bundleMarker, fineStampsHere, kernFiles, markedRun, settleByClock } from "../support/keptOutputs.js"
import { writeSessionFixture } from "../support/sessionFixture.js"
import { seedSpendIn, today } from "../support/spendRows.js"
import { makeTempDir } from "../support/tempDir.js"

// `kern status` of a stopped agent prints the report the last ask kept (src/quick/statusCache.ts) while nothing it
// shows has changed. Over a corpus of folder states, each reached from the last by one change, the kept path's answer
// (stdout, stderr, exit code) is the full report's, made again with no cache; and once a state has settled, the next
// ask is answered from the cache alone (dist/quickStatus.cjs not loaded), which proves the corpus exercises it.

/** A preload that says, at exit, whether the status bundle (the full report) was read. */
const preload = bundleMarker("quickStatus.cjs")

interface Ask {
  readonly args: ReadonlyArray<string>
  readonly env: Record<string, string>
  readonly cwd?: string
}

/** `kern status` as a user runs it, and whether the full report ran. */
const status = async (ask: Ask) => {
  const result = await runCollected(process.execPath, ["--require", preload, kernBin, "status", ...ask.args], {
    env: ask.env,
    ...(ask.cwd === undefined ? {} : { cwd: ask.cwd })
  })
  return markedRun(result)
}

/**
 * Every file of the folder's .kern changed in the last minute as changed a minute ago (each settle its own instant, as
 * a later change has a later time): settled, as a folder nobody touched since is. Files left alone keep their times,
 * so a state that changed only what is not a file (the environment, the arguments) is asked under the last one's key.
 */
const settle = (dir: string) => {
  const now = Date.now()
  const past = new Date(now - 60_000)
  const walk = (path: string) => {
    const info = NodeFs.statSync(path)
    if (info.mtimeMs > now - 59_000) NodeFs.utimesSync(path, past, past)
    if (info.isDirectory()) for (const name of NodeFs.readdirSync(path)) walk(NodePath.join(path, name))
  }
  walk(NodePath.join(dir, ".kern"))
}

/** Gives `file` the modification time `ns` to the nanosecond (GNU touch: node's utimes goes through a double). */
const stampNs = (file: string, ns: bigint) => {
  const seconds = ns / 1_000_000_000n
  const fraction = (ns % 1_000_000_000n).toString().padStart(9, "0")
  const result = spawnSync("touch", ["-m", "-d", `@${seconds}.${fraction}`, file], { encoding: "utf8" })
  if (result.status !== 0) throw new Error(`touch ${file}: ${result.stderr}`)
  expect(NodeFs.statSync(file, { bigint: true }).mtimeNs).toBe(ns)
}

const configFile = (dir: string) => NodePath.join(dir, ".kern", "config.json")
const editConfig = (dir: string, change: (config: Record<string, unknown>) => Record<string, unknown>) =>
  NodeFs.writeFileSync(configFile(dir), JSON.stringify(change(JSON.parse(NodeFs.readFileSync(configFile(dir), "utf8")))))

/**
 * One state of the corpus: the ask made with whatever the last state kept must equal the full report made with no
 * cache; then, settled, the next ask is the cache's (when `kept`) and equal again.
 */
const check = (name: string, ask: Ask, dir: string, kept: boolean) =>
  Effect.promise(async () => {
    const withCache = await status(ask)
    NodeFs.rmSync(statusCacheFile(dir), { force: true })
    const fresh = await status(ask)
    expect(fresh.full, name).toBe(true)
    expect(withCache.seen, name).toEqual(fresh.seen)
    const again = await status(ask)
    expect(again.seen, name).toEqual(fresh.seen)
    expect(again.full, `${name}: ${kept ? "answered from the cache" : "made again"}`).toBe(!kept)
    return fresh.seen
  })

const baseEnv = { OPENROUTER_API_KEY: "sk-test" }

type Step = (
  name: string,
  change: () => void | Promise<void>,
  options?: { readonly ask?: Ask; readonly kept?: boolean }
) => Effect.Effect<void>

describe("kern status: a stopped agent's report kept for the next ask", () => {
  /** A folder and the steps of one part of the corpus, each checked as it is reached. */
  const corpus = (
    steps: (step: Step, dir: string, ask: Ask) => Effect.Effect<void>,
    distinct: number,
    settling: "backdated" | "by the clock" = "backdated"
  ) =>
    Effect.gen(function*() {
      const dir = initAgentWithModel("http://127.0.0.1:9/v1", { prices: { "test-model": { input: 0, output: 0 } } })
      const ask: Ask = { args: [dir], env: baseEnv }
      const outputs: Array<string> = []
      const step: Step = (name, change, options = {}) =>
        Effect.gen(function*() {
          yield* Effect.promise(async () => change())
          if (settling === "backdated") settle(dir)
          else yield* Effect.promise(() => settleByClock(dir))
          const seen = yield* check(name, options.ask ?? ask, dir, options.kept ?? true)
          outputs.push(`${seen.status}\n${seen.stdout}\n${seen.stderr}`)
        })
      yield* steps(step, dir, ask)
      // The states differ: the corpus is not one output asked again and again.
      expect(new Set(outputs).size).toBeGreaterThanOrEqual(distinct)
    })

  const makeDatabase = async (dir: string) => {
    expect((await runCollected(process.execPath, [kernBin, "recall", "stats", dir], { env: baseEnv })).status).toBe(0)
  }

  const databaseAndSessions = (step: Step, dir: string, ask: Ask) =>
    Effect.gen(function*() {
      yield* step("a fresh folder, no kern.db", () => {})
      yield* step("--json", () => {}, { ask: { ...ask, args: [dir, "--json"] } })
      yield* step("kern.db made", () => makeDatabase(dir))
      yield* step("today's spend in kern.db", () => Effect.runPromise(seedSpendIn(dir, today(), [["agent", "", 100, 10, 1.5]])))
      yield* step("more spend, the same size on disk", () => Effect.runPromise(seedSpendIn(dir, today(), [["user", "operator", 100, 10, 1.5]])))
      yield* step("a session", () => void writeSessionFixture(dir, 3))
      yield* step("the session grew", () => void writeSessionFixture(dir, 5))
      yield* step("another session", () => void writeSessionFixture(dir, 2, "20261123-100000-000-cafe"))
    })

  it.live("corpus, kern.db and the sessions: the kept answer is always the full report's", () => corpus(databaseAndSessions, 7))

  // The short settle: each state asked as soon as its files are 100 ms old, with the stamps their changes gave them.
  it.live.skipIf(!fineStampsHere)("corpus, kern.db and the sessions, settled by the clock (100 ms): the kept answer is always the full report's", () =>
    corpus(databaseAndSessions, 7, "by the clock"))

  it.live.skipIf(!fineStampsHere)("a same-size rewrite of kern.db just after a kept ask is seen: the next ask makes the report again and prints the change", () =>
    Effect.gen(function*() {
      const dir = initAgentWithModel("http://127.0.0.1:9/v1", { prices: { "test-model": { input: 0, output: 0 } } })
      const ask: Ask = { args: [dir], env: baseEnv }
      const db = NodePath.join(dir, ".kern", "kern.db")
      yield* Effect.promise(() => makeDatabase(dir))
      yield* Effect.promise(() => Effect.runPromise(seedSpendIn(dir, today(), [["agent", "", 100, 10, 1.5]])))
      for (const [round, cents] of [[1, 2.25], [2, 3.5], [3, 0.75]] as const) {
        yield* Effect.promise(() => settleByClock(dir))
        NodeFs.rmSync(statusCacheFile(dir), { force: true })
        const made = yield* Effect.promise(() => status(ask))
        const kept = yield* Effect.promise(() => status(ask))
        expect(made.full, `round ${round}`).toBe(true)
        expect(kept.full, `round ${round}: kept after 100 ms`).toBe(false)
        expect(kept.seen).toEqual(made.seen)
        // At once, the same size on disk: only the stamps can tell.
        const before = NodeFs.statSync(db, { bigint: true })
        yield* Effect.promise(() => Effect.runPromise(seedSpendIn(dir, today(), [["user", `user${round}`, 100, 10, cents]])))
        expect(NodeFs.statSync(db, { bigint: true }).size).toBe(before.size)
        const next = yield* Effect.promise(() => status(ask))
        expect(next.full, `round ${round}: the change is seen`).toBe(true)
        expect(next.seen.stdout).not.toEqual(kept.seen.stdout)
        NodeFs.rmSync(statusCacheFile(dir), { force: true })
        expect((yield* Effect.promise(() => status(ask))).seen).toEqual(next.seen)
      }
    }))

  it.skipIf(process.platform !== "linux")("the key's settle rule on a real folder: fine stamps settle after 100 ms, whole ones after 2 s", () => {
    const dir = initAgentWithModel("http://127.0.0.1:9/v1")
    writeSessionFixture(dir, 2)
    const bundle = NodePath.join(makeTempDir(), "quickStatus.cjs")
    NodeFs.writeFileSync(bundle, "// the bundle")
    const ask = { dir, json: false, env: baseEnv, bundle }
    const files = kernFiles(dir)
    const at = BigInt(Date.now() - 60_000) * 1_000_000n
    const keepable = (stampedAt: bigint, nowMs: bigint) => {
      for (const file of files) stampNs(file, stampedAt)
      return askKey(ask, Number(nowMs))?.keepable
    }
    const ms = 1_000_000n
    const atMs = at / ms
    // Fine stamps (a part below the millisecond): 100 ms.
    expect(keepable(at + 123_456n, atMs + 101n)).toBe(true)
    expect(keepable(at + 123_456n, atMs + 500n)).toBe(true)
    expect(keepable(at + 123_456n, atMs + 100n)).toBe(false)
    expect(keepable(at + 123_456n, atMs + 50n)).toBe(false)
    // Whole stamps, as a file system of whole seconds, 10 ms or 2 s keeps them: 2 s.
    for (const after of [101n, 500n, 1_999n, 2_000n]) expect(keepable(at, atMs + after), `${after} ms`).toBe(false)
    expect(keepable(at, atMs + 2_001n)).toBe(true)
    // One whole stamp among fine ones holds the folder to 2 s.
    for (const file of files) stampNs(file, at + 777n)
    stampNs(files.at(-1)!, at)
    expect(askKey(ask, Number(atMs + 500n))?.keepable).toBe(false)
    // A stamp one nanosecond later is another key.
    const first = askKey(ask, Number(atMs + 500n))?.key
    stampNs(files.at(-1)!, at + 1n)
    expect(askKey(ask, Number(atMs + 500n))?.key).not.toBe(first)
    expect(askKey(ask, Number(atMs + 500n))?.keepable).toBe(true)
  })

  it.live("corpus, config.json, .env, the environment and the arguments: the kept answer is always the full report's", () =>
    corpus((step, dir, ask) =>
      Effect.gen(function*() {
        yield* step("a fresh folder", () => {})
        yield* step("config: another model", () => editConfig(dir, (config) => ({ ...config, model: "other-model" })))
        yield* step("config: an unknown key", () => editConfig(dir, (config) => ({ ...config, colour: "blue" })))
        yield* step("config: a bad value", () => editConfig(dir, (config) => ({ ...config, heartbeatInterval: "often" })), { kept: false })
        yield* step("config: malformed JSON", () => NodeFs.writeFileSync(configFile(dir), "{ \"model\": "), { kept: false })
        yield* step("config: back to valid, MCP servers, recall off", () =>
          NodeFs.writeFileSync(configFile(dir), JSON.stringify({ model: "test-model", baseURL: "http://127.0.0.1:9/v1", recall: false, mcpServers: { files: { command: "true" } } })))
        yield* step(".env: a channel token", () => NodeFs.appendFileSync(NodePath.join(dir, ".kern", ".env"), "TELEGRAM_BOT_TOKEN=123:abc\n"))
        yield* step("the environment: no API key", () => {}, { ask: { ...ask, env: {} } })
        yield* step("the environment: KERN_MODEL", () => {}, { ask: { ...ask, env: { ...baseEnv, KERN_MODEL: "env-model" } } })
        yield* step("the environment: a variable config.json names", () =>
          editConfig(dir, (config) => ({ ...config, apiKeyEnv: "MY_KEY" })), { ask: { ...ask, env: { MY_KEY: "sk-mine" } } })
        yield* step("the environment: that variable changed to empty", () => {}, { ask: { ...ask, env: { MY_KEY: "" } } })
        yield* step("the environment: TZ", () => {}, { ask: { ...ask, env: { ...baseEnv, TZ: "Pacific/Kiritimati" } } })
        yield* step("the folder named from its parent", () => {}, { ask: { ...ask, args: [NodePath.basename(dir)], cwd: NodePath.dirname(dir) } })
        yield* step("the folder as --dir", () => {}, { ask: { ...ask, args: ["--dir", dir] } })
      }), 10))

  it.live("corpus, the files an agent is found by and a broken kern.db: the kept answer is always the full report's", () =>
    corpus((step, dir) =>
      Effect.gen(function*() {
        yield* step("kern.db made", () => makeDatabase(dir))
        yield* step("a lock left by a dead process", () =>
          NodeFs.writeFileSync(
            NodePath.join(dir, ".kern", "agent.lock"),
            JSON.stringify({ pid: 2 ** 22 + 7, startedAt: new Date().toISOString(), host: NodeOs.hostname(), command: "kern run" })
          ), { kept: false })
        yield* step("a live holder of the lock", () =>
          NodeFs.writeFileSync(
            NodePath.join(dir, ".kern", "agent.lock"),
            JSON.stringify({ pid: process.pid, startedAt: new Date().toISOString(), host: NodeOs.hostname(), command: "kern test" })
          ), { kept: false })
        yield* step("the lock gone, kern start's pid file there", () => {
          NodeFs.rmSync(NodePath.join(dir, ".kern", "agent.lock"))
          NodeFs.writeFileSync(NodePath.join(dir, ".kern", "agent.pid"), `${2 ** 22 + 7}\n`)
        }, { kept: false })
        yield* step("a host's mark that names no host", () => {
          NodeFs.rmSync(NodePath.join(dir, ".kern", "agent.pid"))
          NodeFs.writeFileSync(NodePath.join(dir, ".kern", "hosted.json"), "{}")
        }, { kept: false })
        yield* step("no mark, kern.db gone", () => {
          NodeFs.rmSync(NodePath.join(dir, ".kern", "hosted.json"))
          for (const suffix of ["", "-wal", "-shm"]) NodeFs.rmSync(NodePath.join(dir, ".kern", `kern.db${suffix}`), { force: true })
        })
        // A read that failed is not kept: it may not fail the next time.
        yield* step("kern.db that is no database", () => NodeFs.writeFileSync(NodePath.join(dir, ".kern", "kern.db"), "not a database"), { kept: false })
        yield* step("kern.db torn: its first page only", () => {
          const file = NodePath.join(dir, ".kern", "kern.db")
          NodeFs.rmSync(file)
          const db = new Sqlite(file)
          db.exec("CREATE TABLE t (x); INSERT INTO t VALUES (1)")
          db.close()
          NodeFs.truncateSync(file, 100)
        }, { kept: false })
      }), 4))

  it.live("a kern.db another process holds locked: made again until it is let go", () =>
    Effect.gen(function*() {
      const dir = initAgentWithModel("http://127.0.0.1:9/v1")
      const ask: Ask = { args: [dir], env: baseEnv }
      yield* Effect.promise(() => runCollected(process.execPath, [kernBin, "recall", "stats", dir], { env: baseEnv }))
      settle(dir)
      const db = new Sqlite(NodePath.join(dir, ".kern", "kern.db"))
      try {
        db.exec("BEGIN EXCLUSIVE")
        const locked = yield* Effect.promise(() => status(ask))
        expect(locked.full).toBe(true)
        const again = yield* Effect.promise(() => status(ask))
        expect(again.seen).toEqual(locked.seen)
      } finally {
        db.exec("ROLLBACK")
        db.close()
      }
      settle(dir)
      yield* check("let go", ask, dir, true)
    }))

  it.live("a folder just changed, its stamps whole, is not kept until it settles (2 s); a kept output the clock has passed, or one that is not the report's, is made again", () =>
    Effect.gen(function*() {
      const dir = initAgentWithModel("http://127.0.0.1:9/v1")
      const ask: Ask = { args: [dir], env: baseEnv }
      // Just written (now), on a file system that keeps whole stamps (as one of whole seconds, or FAT's 2 s, keeps them):
      // a change in the same tick of the file clock would not show, so nothing is kept for 2 s. (Fine stamps settle
      // after 100 ms, sooner than the ask below reads them: src/quick/statusSettle.ts, and the tests above.)
      editConfig(dir, (config) => ({ ...config, name: "fresh" }))
      if (process.platform === "linux") stampNs(configFile(dir), BigInt(Date.now()) * 1_000_000n)
      const first = yield* Effect.promise(() => status(ask))
      expect(first.full).toBe(true)
      expect(NodeFs.existsSync(statusCacheFile(dir))).toBe(false)
      settle(dir)
      yield* check("settled", ask, dir, true)
      const cache = statusCacheFile(dir)
      const kept = JSON.parse(NodeFs.readFileSync(cache, "utf8")) as { entries: Array<Record<string, unknown>> }
      expect(NodeFs.statSync(cache).mode & 0o777).toBe(0o600)
      expect(kept.entries).toHaveLength(1)
      // The same entry with the clock past it: the day changed, say.
      NodeFs.writeFileSync(cache, JSON.stringify({ entries: [{ ...kept.entries[0], steadyUntilMs: Date.now() - 1 }] }))
      expect((yield* Effect.promise(() => status(ask))).full).toBe(true)
      // An entry under the right key whose output holds terminal controls: no output the report makes.
      for (const stdout of ["name:      \u001b]52;c;aGk=\u0007", "a\rb", "\u202e"]) {
        NodeFs.writeFileSync(cache, JSON.stringify({ entries: [{ ...kept.entries[0], stdout }] }))
        const hostile = yield* Effect.promise(() => status(ask))
        expect(hostile.full).toBe(true)
        expect(hostile.seen.stdout).not.toContain(stdout)
      }
      // A cache that is no JSON, or not its shape: made again, and kept anew.
      for (const text of ["not json", "[]", "{\"entries\": {}}", "{\"entries\": [{\"key\": 1}]}"]) {
        NodeFs.writeFileSync(cache, text)
        expect((yield* Effect.promise(() => status(ask))).full).toBe(true)
        expect((yield* Effect.promise(() => status(ask))).full).toBe(false)
      }
      // The environment's values are not in the file, only a digest of them.
      expect(NodeFs.readFileSync(cache, "utf8")).not.toContain("sk-test")
    }))

  it.live("a kept answer is written as the report writes it: to a file, to a reader gone (141, quietly), a failure on stderr with 1", () =>
    Effect.gen(function*() {
      const dir = initAgentWithModel("http://127.0.0.1:9/v1", { prices: { "test-model": { input: 0, output: 0 } } })
      const ask: Ask = { args: [dir], env: baseEnv }
      // No API key: the report lists a problem and exits 1, and keeps that too.
      for (const [name, env, code] of [["a clean report", baseEnv, 0], ["a problem", {}, 1]] as const) {
        const asked: Ask = { ...ask, env }
        settle(dir)
        const fresh = yield* Effect.promise(() => status(asked))
        const kept = yield* Effect.promise(() => status(asked))
        expect(fresh.full, name).toBe(true)
        expect(kept.full, name).toBe(false)
        expect(kept.seen, name).toEqual(fresh.seen)
        expect(kept.seen.status, name).toBe(code)
        expect(kept.seen.stdout.length, name).toBeGreaterThan(100)
        if (code === 1) expect(kept.seen.stderr, name).toMatch(/^kern: /)
        // To a file: the same bytes.
        const file = NodePath.join(makeTempDir(), "out.txt")
        const out = NodeFs.openSync(file, "w")
        const toFile = spawnSync(process.execPath, ["--require", preload, kernBin, "status", dir], { env, stdio: ["ignore", out, "pipe"], encoding: "utf8" })
        NodeFs.closeSync(out)
        expect(toFile.stderr, name).toContain("@kept")
        expect(toFile.status, name).toBe(code)
        expect(NodeFs.readFileSync(file, "utf8"), name).toBe(kept.seen.stdout)
        // A reader gone before anything is written (`kern status | true`): the closed output's exit code, no stack trace.
        const closed = yield* Effect.promise(() =>
          runCollected(process.execPath, ["--require", preload, kernBin, "status", dir], {
            env,
            stuckAfterMs: 100_000,
            onSpawn: (child) => void child.stdout?.destroy()
          })
        )
        expect(closed.stderr, name).toContain("@kept")
        expect(closed.stderr, name).not.toMatch(/EPIPE|Error:|\n\s+at /)
        expect(closed.status, `${name}: ${closed.stderr}`).toBe(141)
      }
    }))

  it("nextSpendDayMs: the first instant of the next spend day, in any zone and across daylight saving time", () => {
    const zones = [undefined, "UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata", "Pacific/Chatham", "Australia/Lord_Howe"]
    // Around the DST changes of 2026 and on ordinary days.
    const instants = [Date.UTC(2026, 2, 8, 6), Date.UTC(2026, 2, 29, 0, 30), Date.UTC(2026, 9, 25, 0, 59), Date.UTC(2026, 10, 1, 5), Date.UTC(2026, 3, 5, 15, 1), Date.UTC(2026, 6, 1, 12)]
    for (const zone of zones) {
      for (const at of instants) {
        const next = nextSpendDayMs(at, zone)
        expect(next).toBeGreaterThan(at)
        expect(spendDayIn(next - 1, zone)).toBe(spendDayIn(at, zone))
        expect(spendDayIn(next, zone)).not.toBe(spendDayIn(at, zone))
        expect(next - at).toBeLessThanOrEqual(25 * 60 * 60 * 1000)
      }
    }
  })
})
