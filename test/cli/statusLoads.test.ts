import { describe, expect, it } from "@effect/vitest"
import Sqlite from "better-sqlite3"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { startServer, token } from "../channels/web/harness.js"
import { initAgentWithModel } from "../support/agentFolder.js"
import { bundleReadHooks } from "../support/bundleReads.js"
import { kernBin, runCollected } from "../support/cli.js"
import { makeTempDir } from "../support/tempDir.js"

// `kern status` is run again and again (scripts, prompts): it loads SQLite only when kern.db holds something, and the
// running agent's HTTP client only while a live process holds the folder's lock (src/channels/web/statusStored.ts, src/cli/statusLive.ts).
// A running agent on this machine is asked for the whole output (src/quick/statusAsk.ts) and nothing else is loaded.
// An up-to-date kern.db is read as it is (src/storage/readDatabase.ts): no migrator, no sqlite-vec; one that is behind
// or is no database goes through the agent's database layer, which migrates it or names what is wrong (sqlite-vec
// only when a migration runs: src/storage/vectorExtension.ts).

/** `kern status <dir>` with what the process required, by name, from a preload that records Module._load. */
const statusLoads = async (dir: string, args: ReadonlyArray<string> = []) => {
  const preload = NodePath.join(makeTempDir(), "loads.cjs")
  NodeFs.writeFileSync(
    preload,
    `const Module = require("node:module")
const NodeFs = require("node:fs")
const loaded = new Set()
const load = Module._load
Module._load = function (request, ...rest) { loaded.add(request); return load.call(this, request, ...rest) }
// bin/kern.js reads its quick bundles and runs them as scripts (not through require): their names count as loaded,
// opened to be read (bin/codeCache.js) or read whole.
const bundleRead = (file) => { if (String(file).endsWith(".cjs")) loaded.add(require("node:path").basename(String(file))) }
${bundleReadHooks}process.on("exit", () => process.stderr.write("\\nloaded: " + JSON.stringify([...loaded]) + "\\n"))
`
  )
  const result = await runCollected(process.execPath, ["--require", preload, kernBin, "status", dir, ...args], { env: { OPENROUTER_API_KEY: "sk-test" } })
  const line = result.stderr.split("\n").find((text) => text.startsWith("loaded: "))
  if (line === undefined) throw new Error(`no list of loaded modules: ${result.stderr}`)
  return { ...result, loaded: JSON.parse(line.slice("loaded: ".length)) as ReadonlyArray<string> }
}

describe("kern status loads what it needs", () => {
  it.live("a folder without kern.db: no SQLite, no HTTP client", () =>
    Effect.gen(function*() {
      const dir = initAgentWithModel("http://127.0.0.1:9/v1")
      NodeFs.rmSync(NodePath.join(dir, ".kern", "kern.db"), { force: true })
      const result = yield* Effect.promise(() => statusLoads(dir))
      expect(result.stdout).toContain("database:  none yet")
      expect(result.loaded).not.toContain("better-sqlite3")
      expect(result.loaded).not.toContain("sqlite-vec")
      expect(result.loaded).not.toContain("node:http")
    }))

  it.live("a stopped agent with kern.db: SQLite for its figures, no HTTP client", () =>
    Effect.gen(function*() {
      const dir = initAgentWithModel("http://127.0.0.1:9/v1")
      // A turn's usage in kern.db, as `kern status` reads it after one.
      const made = yield* Effect.promise(() =>
        runCollected(process.execPath, [kernBin, "recall", "stats", dir], { env: { OPENROUTER_API_KEY: "sk-test" } })
      )
      expect(made.status, made.stderr).toBe(0)
      expect(NodeFs.statSync(NodePath.join(dir, ".kern", "kern.db")).size).toBeGreaterThan(0)
      const result = yield* Effect.promise(() => statusLoads(dir))
      expect(result.stdout).toContain("usage:     no turns yet")
      expect(result.stdout).toContain("running:   no")
      expect(result.loaded).toContain("better-sqlite3")
      expect(result.loaded).not.toContain("sqlite-vec")
      expect(result.loaded).not.toContain("node:http")
      expect(result.stdout).not.toContain("kern.db:")
    }))

  it.live("a kern.db behind the newest migration: migrated by the agent's database layer, then read", () =>
    Effect.gen(function*() {
      const dir = initAgentWithModel("http://127.0.0.1:9/v1")
      const file = NodePath.join(dir, ".kern", "kern.db")
      // An SQLite database without kern's tables (none of its migrations applied), not empty on disk.
      const db = new Sqlite(file)
      db.prepare("PRAGMA user_version = 1").run()
      db.close()
      expect(NodeFs.statSync(file).size).toBeGreaterThan(0)
      const result = yield* Effect.promise(() => statusLoads(dir))
      expect(result.stdout).toContain("usage:     no turns yet")
      expect(result.stdout).not.toContain("kern.db:")
      // Given kern's tables from the schema snapshot: no migration ran, so sqlite-vec was not needed either.
      expect(result.loaded).not.toContain("sqlite-vec")
      const after = new Sqlite(file, { readonly: true })
      const newest = after.prepare("SELECT max(migration_id) AS id FROM kern_migrations").get() as { readonly id: number }
      after.close()
      expect(newest.id).toBeGreaterThan(1000)
    }))

  it.live("a kern.db that is no SQLite database: named among the problems, left as it is", () =>
    Effect.gen(function*() {
      const dir = initAgentWithModel("http://127.0.0.1:9/v1")
      const file = NodePath.join(dir, ".kern", "kern.db")
      NodeFs.writeFileSync(file, "not a database")
      const result = yield* Effect.promise(() => statusLoads(dir))
      expect(result.status).toBe(1)
      expect(result.stdout).toContain("it is not an SQLite database")
      expect(NodeFs.readFileSync(file, "utf8")).toBe("not a database")
    }))

  it.live("a running agent on this machine: asked for the whole output by a client without Effect, SQLite or the status bundle", () =>
    Effect.scoped(Effect.gen(function*() {
      const { dir } = yield* startServer({ recordAddress: true, files: { ".kern/.env": `KERN_AUTH_TOKEN=${token}\n` } })
      const result = yield* Effect.promise(() => statusLoads(dir))
      expect(result.status, result.stderr).toBe(1)
      expect(result.stdout).toMatch(/^server: {4}http:\/\/127\.0\.0\.1:\d+, up \d+ s$/m)
      expect(result.stderr).toContain("kern: 1 problem listed above")
      expect(result.loaded).toContain("quickStatusAsk.cjs")
      for (const unused of ["quickStatus.cjs", "better-sqlite3"]) expect(result.loaded).not.toContain(unused)
      const json = yield* Effect.promise(() => statusLoads(dir, ["--json"]))
      expect(JSON.parse(json.stdout).server).toMatchObject({ url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:/) })
      expect(json.loaded).not.toContain("quickStatus.cjs")
    })))

  it.live("an agent that does not answer the report (its lock's address serves nothing): the command line's own report", () =>
    Effect.gen(function*() {
      const dir = initAgentWithModel("http://127.0.0.1:9/v1")
      // A live holder (this process) whose recorded address nobody serves.
      NodeFs.writeFileSync(
        NodePath.join(dir, ".kern", "agent.lock"),
        JSON.stringify({ pid: process.pid, startedAt: new Date().toISOString(), host: NodeOs.hostname(), command: "kern test", address: "http://127.0.0.1:9" })
      )
      NodeFs.appendFileSync(NodePath.join(dir, ".kern", ".env"), "KERN_AUTH_TOKEN=t0123456789\n")
      const result = yield* Effect.promise(() => statusLoads(dir))
      expect(result.stdout).toContain("running:   pid")
      expect(result.loaded).toContain("quickStatusAsk.cjs")
      expect(result.loaded).toContain("quickStatus.cjs")
    }))
})
