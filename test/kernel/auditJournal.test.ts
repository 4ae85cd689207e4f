import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Context, Effect, Exit, Layer, Logger, LogLevel, Option, Ref, Scope } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as KnownSecrets from "../../src/config/KnownSecrets.js"
import { journalFolder, journalName, machineTag, writerRunning } from "../../src/kernel/auditJournal.js"
import * as EventLog from "../../src/kernel/EventLog.js"
import { valuesOf } from "../../src/kernel/eventRows.js"
import { forgetRetired, ingestJournal, ingestOthers } from "../../src/kernel/journalIngest.js"
import * as Database from "../../src/storage/Database.js"
import { processRunning } from "../../src/storage/processState.js"
import { databases } from "../support/databases.js"
import { holdWriteLock } from "../support/dbLock.js"
import { makeTempDir } from "../support/tempDir.js"
import { eventually } from "../support/waitFor.js"

const worktree = NodePath.resolve(import.meta.dirname, "../..")

/** A kern.db path in a fresh folder, and its journal folder. */
const freshDb = () => {
  const file = NodePath.join(makeTempDir(), ".kern", "kern.db")
  return { file, folder: journalFolder(file) }
}

interface Row {
  readonly sessionId: string
  readonly toolId: string | null
  readonly status: string
  readonly errorMessage: string | null
}

/** kern.db's events as a connection of the test's own sees them, without replaying anything. */
const rowsOnDisk = (file: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<Row>`SELECT session_id, tool_id, status, error_message FROM kernel_events ORDER BY event_id`).pipe(
    Effect.provide(Database.layer({ filename: file })),
    Effect.orDie
  )

const journalRows = (file: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ file: string; committed: number }>`SELECT file, committed FROM audit_journals`).pipe(
    Effect.provide(Database.layer({ filename: file })),
    Effect.orDie
  )

const eventLogOver = (file: string, secrets: Readonly<Record<string, string>> = {}) =>
  EventLog.layerSql.pipe(Layer.provide(Layer.merge(Database.layer({ filename: file }), KnownSecrets.layerFrom(secrets))))

/** A restart: the event log built over the folder (which replays the journals of processes that are gone), then closed. */
const restart = (file: string) => Effect.scoped(Layer.build(eventLogOver(file))).pipe(Effect.orDie)

/** The journal files in `folder`, with their text. */
const journals = (folder: string): ReadonlyArray<{ readonly name: string; readonly text: string }> =>
  NodeFs.existsSync(folder)
    ? NodeFs.readdirSync(folder).map((name) => ({ name, text: NodeFs.readFileSync(NodePath.join(folder, name), "utf8") }))
    : []

/** Warnings and errors logged while `effect` runs. */
const logged = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const lines: Array<string> = []
    const logger = Logger.make(({ message }) => lines.push(Array.isArray(message) ? message.join(" ") : String(message)))
    const result = yield* effect.pipe(
      Effect.provide(Logger.replace(Logger.defaultLogger, logger)),
      Logger.withMinimumLogLevel(LogLevel.Warning)
    )
    return { result, lines }
  })

/** A pid no process has (above Linux's largest), for a journal whose writer is gone. */
const deadPid = 2_147_483_000

const line = (sessionId: string, n: number) =>
  `${JSON.stringify(valuesOf({ tsMs: 1000 + n, decisionKey: "kernel.tool.dispatch", runId: "run", traceId: "trace", sessionId, toolId: `tool.${n}`, status: "ok" }))}\n`

/** Writes a journal as a process that is gone left it. */
const deadJournal = (folder: string, text: string, name = `${deadPid}-0-0a0b0c0d.jsonl`) => {
  NodeFs.mkdirSync(folder, { recursive: true, mode: 0o700 })
  NodeFs.writeFileSync(NodePath.join(folder, name), text, { mode: 0o600 })
  return name
}

/** test/support/auditChild.ts over `file`: a kernel making calls on request, until killed. */
const auditChild = (file: string, secret?: string) =>
  Effect.acquireRelease(
    Effect.async<{ readonly child: ChildProcess; readonly call: (session: string) => Effect.Effect<void> }, Error>((resume) => {
      const child = spawn(process.execPath, ["--import", "tsx", "test/support/auditChild.ts", file, ...(secret === undefined ? [] : [secret])], {
        cwd: worktree,
        stdio: ["pipe", "pipe", "inherit"]
      })
      let out = ""
      const waiters: Array<{ readonly text: string; readonly done: () => void }> = []
      child.stdout!.on("data", (chunk: Buffer) => {
        out += chunk.toString("utf8")
        for (const waiter of waiters.splice(0)) {
          if (out.includes(waiter.text)) waiter.done()
          else waiters.push(waiter)
        }
      })
      const shows = (text: string) =>
        Effect.async<void>((done) => {
          if (out.includes(text)) return done(Effect.void)
          waiters.push({ text, done: () => done(Effect.void) })
        })
      const call = (session: string) =>
        Effect.zipRight(Effect.sync(() => child.stdin!.write(`call ${session}\n`)), shows(`called ${session}\n`))
      child.once("exit", (code) => {
        if (!out.includes("ready\n")) resume(Effect.fail(new Error(`the audit child exited (${code}) before it was ready`)))
      })
      Effect.runFork(Effect.map(shows("ready\n"), () => resume(Effect.succeed({ child, call }))))
    }),
    ({ child }) => Effect.sync(() => child.exitCode === null && child.signalCode === null && child.kill("SIGKILL"))
  )

/** Kills the child with SIGKILL and waits until it is gone. */
const killNine = (child: ChildProcess) =>
  Effect.gen(function*() {
    const pid = child.pid!
    child.kill("SIGKILL")
    expect(yield* eventually(() => !processRunning(pid))).toBe(true)
  })

describe("the audit journal across kill -9", () => {
  it.live("a call's event is in the journal when the call returns: killed then, a restart writes it to kern.db exactly once", () =>
    Effect.scoped(Effect.gen(function*() {
      const { file, folder } = freshDb()
      const { call, child } = yield* auditChild(file)
      yield* call("before")
      // kern.db refuses every write now: whatever the child's batch does, the next call's event can only be in its journal.
      const lock = yield* holdWriteLock(file)
      yield* call("killed")
      yield* killNine(child)
      expect(journals(folder).map((journal) => journal.text).join("")).toContain("\"killed\"")
      expect((yield* rowsOnDisk(file)).filter((row) => row.sessionId === "killed")).toEqual([])
      yield* lock.release

      yield* restart(file)
      const rows = yield* rowsOnDisk(file)
      expect(rows.filter((row) => row.sessionId === "before")).toHaveLength(1)
      expect(rows.filter((row) => row.sessionId === "killed")).toEqual([
        expect.objectContaining({ toolId: "audit.echo", status: "error", errorMessage: "echo: hello " })
      ])
      // All of it in kern.db: the journal and its row are gone, and another restart adds nothing.
      expect(journals(folder)).toEqual([])
      expect(yield* journalRows(file)).toEqual([])
      yield* restart(file)
      expect(yield* rowsOnDisk(file)).toHaveLength(2)
    })))

  it.live("a read in another process sees a running process's journal at once, and the event is still written once", () =>
    Effect.scoped(Effect.gen(function*() {
      const { file, folder } = freshDb()
      const { call, child } = yield* auditChild(file)
      const lock = yield* holdWriteLock(file)
      yield* call("live")
      yield* lock.release
      const scope = yield* Scope.make()
      const log = Context.get(yield* Layer.buildWithScope(eventLogOver(file), scope), EventLog.EventLog)
      expect((yield* log.recent(10)).map((event) => event.sessionId)).toEqual(["live"])
      // The writer runs on: its journal stays, read up to where the reader took it.
      expect(journals(folder).filter((journal) => journal.name.startsWith(`${child.pid}-`))).toHaveLength(1)
      yield* call("later")
      yield* killNine(child)
      yield* Scope.close(scope, Exit.void)
      yield* restart(file)
      expect((yield* rowsOnDisk(file)).map((row) => row.sessionId)).toEqual(["live", "later"])
      expect(journals(folder)).toEqual([])
    })))

  it.live("the journal is 0600 in a 0700 folder whatever the umask, and holds known secrets redacted", () =>
    Effect.gen(function*() {
      const { file, folder } = freshDb()
      const secret = "sk-journal-0123456789abcdef"
      const before = process.umask(0)
      const scope = yield* Scope.make()
      const log = yield* Effect.ensuring(
        Effect.map(Layer.buildWithScope(eventLogOver(file, { API_KEY: secret }), scope), Context.get(EventLog.EventLog)),
        Effect.sync(() => process.umask(before))
      )
      yield* log.record({
        decisionKey: "kernel.run.finished",
        runId: "run",
        traceId: "trace",
        status: "error",
        errorMessage: `the key ${secret} was refused`,
        detail: JSON.stringify({ error: `bad key ${secret}` })
      })
      const [journal] = journals(folder)
      expect(journal).toBeDefined()
      expect(NodeFs.statSync(NodePath.join(folder, journal!.name)).mode & 0o777).toBe(0o600)
      expect(NodeFs.statSync(folder).mode & 0o777).toBe(0o700)
      expect(journal!.text).not.toContain(secret)
      expect(journal!.text).toContain("[redacted:API_KEY]")
      yield* Scope.close(scope, Exit.void)
      const [row] = yield* rowsOnDisk(file)
      expect(row?.errorMessage).toBe("the key [redacted:API_KEY] was refused")
    }))
})

describe("replaying audit journals", () => {
  it.live("a journal read again adds each event once: a batch committed before the kill, a replay, a second replay", () =>
    Effect.gen(function*() {
      const { file, folder } = freshDb()
      const lines = [line("s", 1), line("s", 2), line("s", 3)]
      const name = deadJournal(folder, lines.join(""))
      // The writer's last batch took the first line, then it was killed.
      const first = yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
        Effect.zipRight(
          sql`INSERT INTO audit_journals (file, committed) VALUES (${name}, 0)`,
          Effect.map(ingestJournal(sql, folder, name), (ingested) => ingested.committed)
        )).pipe(Effect.provide(Database.layer({ filename: file })), Effect.orDie)
      expect(first).toBe(Buffer.byteLength(lines.join("")))
      // As if it had only taken the first line: the offset back to it, the other two rows removed.
      yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
        Effect.zipRight(
          sql`UPDATE audit_journals SET committed = ${Buffer.byteLength(lines[0]!)}`,
          sql`DELETE FROM kernel_events WHERE tool_id <> 'tool.1'`
        )).pipe(Effect.provide(Database.layer({ filename: file })), Effect.orDie)

      // Two processes starting at once both replay it: each event once.
      yield* Effect.all([restart(file), restart(file)], { concurrency: 2 })
      yield* restart(file)
      expect((yield* rowsOnDisk(file)).map((row) => row.toolId)).toEqual(["tool.1", "tool.2", "tool.3"])
      expect(journals(folder)).toEqual([])
      expect(yield* journalRows(file)).toEqual([])
    }))

  it.live("a torn last line (its writer killed mid-write) is skipped with a log line; the whole lines are written", () =>
    Effect.gen(function*() {
      const { file, folder } = freshDb()
      const torn = line("s", 3).slice(0, 40)
      const name = deadJournal(folder, line("s", 1) + line("s", 2) + torn)
      const { lines } = yield* logged(restart(file))
      expect((yield* rowsOnDisk(file)).map((row) => row.toolId)).toEqual(["tool.1", "tool.2"])
      expect(lines).toEqual([expect.stringContaining(`${name} ends in a partial line (40 bytes`)])
      expect(journals(folder)).toEqual([])
    }))

  it.live("a line that is not an audit event is skipped with a log line naming where it is", () =>
    Effect.gen(function*() {
      const { file, folder } = freshDb()
      const bad = "{\"not\": \"an event\"}\n"
      deadJournal(folder, line("s", 1) + bad + line("s", 3))
      const { lines } = yield* logged(restart(file))
      expect((yield* rowsOnDisk(file)).map((row) => row.toolId)).toEqual(["tool.1", "tool.3"])
      expect(lines).toEqual([expect.stringContaining(`the line at byte ${Buffer.byteLength(line("s", 1))} is not an audit event`)])
    }))

  it.live("a running writer's journal is read but kept (its later lines read later); a reused pid's is retired", () =>
    Effect.gen(function*() {
      const { file, folder } = freshDb()
      // This process's pid with another start time: the pid now names a program that is not the writer.
      deadJournal(folder, line("reused", 1), `${process.pid}-1-0a0b0c0d.jsonl`)
      const stat = NodeFs.readFileSync(`/proc/${process.pid}/stat`, "utf8")
      const start = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]
      const live = deadJournal(folder, line("live", 1), `${process.pid}-${start}-0e0f0a0b.jsonl`)
      yield* restart(file)
      expect((yield* rowsOnDisk(file)).map((row) => row.sessionId).sort()).toEqual(["live", "reused"])
      expect(journals(folder).map((journal) => journal.name)).toEqual([live])
      NodeFs.appendFileSync(NodePath.join(folder, live), line("live", 2))
      yield* restart(file)
      expect((yield* rowsOnDisk(file)).map((row) => row.toolId).sort()).toEqual(["tool.1", "tool.1", "tool.2"])
      expect(journals(folder).map((journal) => journal.name)).toEqual([live])
    }))

  it("a journal names its machine: another machine's writer is never judged gone from here (folders shared by runners)", () => {
    const here = machineTag()
    const elsewhere = here === "00000000" ? "ffffffff" : "00000000"
    expect(journalName(42, "7", "0a0b", here)).toBe(`42-7-0a0b-m${here}.jsonl`)
    // A pid no process has: gone when the journal is this machine's (named so or, older, not named), running when
    // another machine's, whose pids say nothing here.
    expect(writerRunning(journalName(deadPid, "0", "0a0b", here))).toBe(false)
    expect(writerRunning(`${deadPid}-0-0a0b.jsonl`)).toBe(false)
    expect(writerRunning(journalName(deadPid, "0", "0a0b", elsewhere))).toBe(true)
    expect(writerRunning(journalName(process.pid, "0", "0a0b", here))).toBe(true)
  })
})

describe.each(databases)("audit journals into kern.db on $dialect", ({ layer }) => {
  it.live("two passes at once add each event once; a dead writer's journal is retired with its row; a bad line is skipped", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const folder = NodePath.join(makeTempDir(), "audit")
      const bad = "{\"not\": \"an event\"}\n"
      const name = deadJournal(folder, line("s", 1) + bad + line("s", 2) + line("s", 3))
      const size = NodeFs.statSync(NodePath.join(folder, name)).size
      const [a, b] = yield* Effect.all([ingestJournal(sql, folder, name), ingestJournal(sql, folder, name)], { concurrency: 2 })
      expect([a.committed, b.committed]).toEqual([size, size])
      const rows = () => sql<{ toolId: string }>`SELECT tool_id FROM kernel_events ORDER BY event_id`.pipe(Effect.map((r) => r.map((row) => row.toolId)))
      expect(yield* rows()).toEqual(["tool.1", "tool.2", "tool.3"])
      expect(yield* sql<{ file: string; committed: number }>`SELECT file, committed FROM audit_journals`).toEqual([{ file: name, committed: size }])

      // Its writer is gone: a read of the folder finds it all in kern.db and retires it, file and row.
      NodeFs.appendFileSync(NodePath.join(folder, name), line("s", 4))
      yield* ingestOthers(sql, folder, undefined, yield* Ref.make<ReadonlyMap<string, number>>(new Map()))
      expect(yield* rows()).toEqual(["tool.1", "tool.2", "tool.3", "tool.4"])
      expect(journals(folder)).toEqual([])
      expect(yield* sql`SELECT file FROM audit_journals`).toEqual([])

      // A row whose file is gone (deleted, its row not) is forgotten.
      yield* sql`INSERT INTO audit_journals (file, committed) VALUES ('1-0-00000000.jsonl', 10)`
      yield* forgetRetired(sql, folder)
      expect(yield* sql`SELECT file FROM audit_journals`).toEqual([])
    }).pipe(Effect.provide(layer), Effect.orDie))

  it.live("over a kern.db that is no file (PostgreSQL, in memory), the journals go to the folder given: an event is in it when record returns, a dead writer's is read in", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const folder = NodePath.join(makeTempDir(), ".kern", "audit")
      const dead = deadJournal(folder, line("dead", 1))
      yield* Effect.scoped(Effect.gen(function*() {
        const context = yield* Layer.build(EventLog.layerSqlAt(Option.some(folder)).pipe(Layer.provide(KnownSecrets.layerNone)))
        const log = Context.get(context, EventLog.EventLog)
        // The dead writer's events are in kern.db before this log records anything, and its journal is retired.
        expect((yield* sql<{ sessionId: string }>`SELECT session_id FROM kernel_events`).map((row) => row.sessionId)).toEqual(["dead"])
        expect(journals(folder).map((journal) => journal.name)).not.toContain(dead)
        yield* log.record({ decisionKey: "kernel.tool.dispatch", runId: "run", traceId: "trace", sessionId: "alive", toolId: "tool.x", status: "ok" })
        // Returned: the event is in this process's journal, so a kill -9 now loses nothing.
        expect(journals(folder).map((journal) => journal.text).join("")).toContain("\"alive\"")
      }))
      // Closed: everything is in kern.db and the journal is gone.
      expect((yield* sql<{ sessionId: string }>`SELECT session_id FROM kernel_events ORDER BY event_id`).map((row) => row.sessionId)).toEqual(["dead", "alive"])
      expect(journals(folder)).toEqual([])
    }).pipe(Effect.provide(layer), Effect.orDie))
})
