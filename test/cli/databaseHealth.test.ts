import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as Database from "../../src/storage/Database.js"
import { initAgentWithModel } from "../support/agentFolder.js"
import { runKern } from "../support/cli.js"
import { FakeReply, make as makeFakeServer } from "../support/fakeModelServer.js"

const env = { OPENROUTER_API_KEY: "sk-test" }

/** `kern run` headless with `input` on stdin: it answers, and exits at the end of input. */
const run = (dir: string, input: string) =>
  Effect.promise(() => {
    let stdin: NodeJS.WritableStream | undefined
    const done = runKern(["run"], { cwd: dir, env, stdin: true, onSpawn: (child) => (stdin = child.stdin ?? undefined) })
    stdin?.end(input)
    return done
  })

const marker = "kern-health-filler-"

/** Fills kernel_events with rows (many pages), checkpointed into the main file. */
const fillEvents = (dbFile: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const detail = marker.repeat(40)
    yield* sql.withTransaction(Effect.forEach(Array.from({ length: 3000 }, (_, i) => i), (i) =>
      sql`INSERT INTO kernel_events ${
        sql.insert({ tsMs: i, decisionKey: "kernel.run.started", runId: `r${i}`, traceId: "t", sessionId: "", status: "ok", detail })
      }`, { discard: true }))
    yield* sql`PRAGMA wal_checkpoint(TRUNCATE)`
  }).pipe(Effect.provide(Database.layer({ filename: dbFile })))

/** Overwrites five pages holding filler rows, in the middle of the table, with garbage. */
const damagePages = (dbFile: string) => {
  const bytes = NodeFs.readFileSync(dbFile)
  const pageSize = bytes.readUInt16BE(16) === 1 ? 65536 : bytes.readUInt16BE(16)
  const filled: Array<number> = []
  for (let page = 1; page * pageSize < bytes.length; page++) {
    if (bytes.subarray(page * pageSize, (page + 1) * pageSize).includes(marker)) filled.push(page)
  }
  const middle = Math.floor(filled.length / 2)
  const fd = NodeFs.openSync(dbFile, "r+")
  for (const page of filled.slice(middle, middle + 5)) NodeFs.writeSync(fd, Buffer.alloc(pageSize, 0xa7), 0, pageSize, page * pageSize)
  NodeFs.closeSync(fd)
}

describe("kern.db at start", () => {
  it.scopedLive("a deleted kern.db beside existing sessions is refused, naming what can be rebuilt; an empty file starts over", () =>
    Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL)
      yield* server.reply(FakeReply.text("Noted."))
      expect((yield* run(dir, "remember the milk\n")).status).toBe(0)
      const dbFile = NodePath.join(dir, ".kern", "kern.db")
      for (const suffix of ["", "-wal", "-shm"]) NodeFs.rmSync(`${dbFile}${suffix}`, { force: true })

      const refused = yield* run(dir, "")
      expect(refused.status).toBe(1)
      expect(refused.stderr).toContain("kern.db is missing")
      expect(refused.stderr).toContain("kern recall reindex")
      expect(refused.stderr).toContain("kern segments rebuild")
      expect(refused.stderr).toMatch(/cannot: usage and cost totals, the audit log, paired users/)
      expect(refused.stderr).toContain(`touch ${dbFile}`)
      expect(NodeFs.existsSync(dbFile)).toBe(false)

      NodeFs.writeFileSync(dbFile, "")
      expect((yield* run(dir, "")).status).toBe(0)
    }), { timeout: 120_000 })

  it.scopedLive("a kern.db with damaged pages fails SQLite's quick_check at start: refused plainly, never run on", () =>
    Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = initAgentWithModel(server.baseURL)
      const dbFile = NodePath.join(dir, ".kern", "kern.db")
      expect((yield* run(dir, "")).status).toBe(0)
      yield* fillEvents(dbFile)
      damagePages(dbFile)

      const refused = yield* run(dir, "")
      expect(refused.status).toBe(1)
      expect(refused.stderr).toContain("kern.db is damaged: SQLite's integrity check fails")
      expect(refused.stderr).toContain("kern recall reindex")
      expect(refused.stderr).toContain(`mv ${dbFile} ${dbFile}.damaged`)
    }), { timeout: 120_000 })
})
