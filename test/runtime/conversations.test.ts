import * as NodeContext from "@effect/platform-node/NodeContext"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Schema, Scope } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { agentRuntimeLayer } from "../../src/cli/agentLayer.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import { AgentRuntime } from "../../src/runtime/AgentRuntime.js"
import { servingRuntimeLayer } from "../../src/runtime/layers.js"
import { FakeReply, make as makeFakeServer } from "../support/fakeModelServer.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"

// The conversations as Entities of the cluster over kern.db: a message handed to a conversation stays in the
// cluster's journal until its turn has recorded it, is delivered again after a restart, and is answered once.

const runtimeLayer = (dir: string) =>
  servingRuntimeLayer.pipe(
    Layer.provideMerge(agentRuntimeLayer(dir, { command: "kern test", waitSeconds: 10 })),
    Layer.provide(Layer.succeed(ProcessEnv, { OPENROUTER_API_KEY: "sk-test" })),
    Layer.provide(NodeContext.layer)
  )

/** A runtime on `dir`, serving its queue, in a scope of its own (closed as kern closes on SIGTERM). */
const start = (dir: string) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const context = yield* Layer.buildWithScope(runtimeLayer(dir), scope)
    const runtime = Context.get(context, AgentRuntime)
    const stop = Scope.close(scope, Exit.void)
    return { runtime, sql: Context.get(context, SqlClient.SqlClient), stop }
  })

const Rows = Schema.Array(Schema.Struct({ id: Schema.String, processed: Schema.Number, payload: Schema.String }))

/** The conversations' journal rows (the cluster's own table in kern.db). */
const journal = (sql: SqlClient.SqlClient) =>
  sql.withoutTransforms()`SELECT CAST(id AS TEXT) AS id, processed, payload FROM cluster_messages
    WHERE entity_type = 'Conversation' ORDER BY rowid`.pipe(Effect.flatMap(Schema.decodeUnknown(Rows)), Effect.orDie)

const sessionLines = (dir: string) => {
  const sessions = NodePath.join(dir, ".kern/sessions")
  return NodeFs.readdirSync(sessions).flatMap((name) =>
    NodeFs.readFileSync(NodePath.join(sessions, name), "utf8").trim().split("\n").map((line) =>
      JSON.parse(line) as { _tag: string; text?: string; inboxId?: number }
    )
  )
}

/** Polls (real time) until `check` holds; a condition that never comes fails the test at its timeout. */
const until = <E, R>(check: Effect.Effect<boolean, E, R>) =>
  Effect.gen(function*() {
    while (!(yield* check)) yield* Effect.sleep("20 millis")
  })

const agentDir = (baseURL: string) => {
  const dir = NodePath.join(makeTempDir(), "agent")
  writeFiles(dir, {
    ".kern/config.json": JSON.stringify({ model: "m", baseURL, heartbeatInterval: 0, autoCommit: false, recall: false })
  })
  return dir
}

describe("conversations as durable entities", () => {
  it.scopedLive("a message pending in the journal at shutdown is answered after the restart, once; one the session holds only leaves", () =>
    Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = agentDir(server.baseURL)

      // The first turn hangs on the model; the second message (another channel) waits behind it.
      yield* server.reply(FakeReply.text("too late", { delay: "60 seconds" }))
      const first = yield* start(dir)
      yield* first.runtime.submit({ interface: "cli", channel: "a", userId: "operator", text: "first" })
      yield* server.awaitRequests(1)
      yield* first.runtime.submit({ interface: "cli", channel: "b", userId: "operator", text: "second" })
      // Both are journaled; "first" is recorded (its handler is done), "second" is not.
      const before = yield* journal(first.sql)
      expect(before.map((row) => JSON.parse(row.payload).text)).toEqual(["first", "second"])
      yield* until(Effect.map(journal(first.sql), (rows) => rows[0]?.processed === 1))
      expect((yield* journal(first.sql))[1]?.processed).toBe(0)
      // As if the process had died between the session's line and the journal's reply: "first" is pending again.
      const sql = first.sql.withoutTransforms()
      yield* sql`DELETE FROM cluster_replies WHERE request_id = ${before[0]!.id}`.pipe(Effect.orDie)
      yield* sql`UPDATE cluster_messages SET processed = 0, last_reply_id = NULL WHERE id = ${before[0]!.id}`.pipe(Effect.orDie)
      yield* first.stop

      expect(sessionLines(dir).filter((line) => line.text === "second")).toHaveLength(0)
      yield* server.reply(FakeReply.text("Answered the second."))
      const second = yield* start(dir)
      yield* until(Effect.sync(() => sessionLines(dir).some((line) => line._tag === "assistant" && line.text === "Answered the second.")))
      const lines = sessionLines(dir)
      expect(lines.filter((line) => line._tag === "user" && line.text === "first")).toHaveLength(1)
      expect(lines.filter((line) => line._tag === "user" && line.text === "second")).toHaveLength(1)
      // One model request per turn: "first" was redelivered and only left; "second" was answered once.
      expect((yield* server.modelRequests).length).toBe(2)
      expect((yield* second.runtime.status).inbox).toBe(0)
      // The journal is pruned of what the turns recorded.
      yield* until(Effect.map(journal(second.sql), (rows) => rows.length === 0))
      yield* second.stop
    }), 120_000)

  it.scopedLive("the journal keeps only what is pending: recorded messages are pruned after their turns", () =>
    Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = agentDir(server.baseURL)
      const agent = yield* start(dir)
      for (const text of ["one", "two", "three"]) {
        yield* server.reply(FakeReply.text(`re: ${text}`))
        yield* agent.runtime.submit({ interface: "cli", channel: "terminal", userId: "operator", text })
        yield* until(Effect.sync(() => sessionLines(dir).some((line) => line._tag === "assistant" && line.text === `re: ${text}`)))
      }
      yield* until(Effect.map(journal(agent.sql), (rows) => rows.length === 0))
      expect((yield* server.modelRequests).length).toBe(3)
      yield* agent.stop
    }), 120_000)

  it.scopedLive("a friend's message redelivered after its turn recorded it only leaves: its own conversation's session is looked in", () =>
    Effect.gen(function*() {
      const server = yield* makeFakeServer
      const dir = agentDir(server.baseURL)
      yield* server.reply(FakeReply.text("too late", { delay: "60 seconds" }))
      const first = yield* start(dir)
      yield* first.runtime.submit({ interface: "telegram", channel: "42", userId: "42", text: "from a friend" })
      yield* server.awaitRequests(1)
      yield* until(Effect.map(journal(first.sql), (rows) => rows[0]?.processed === 1))
      const [row] = yield* journal(first.sql)
      const sql = first.sql.withoutTransforms()
      yield* sql`DELETE FROM cluster_replies WHERE request_id = ${row!.id}`.pipe(Effect.orDie)
      yield* sql`UPDATE cluster_messages SET processed = 0, last_reply_id = NULL WHERE id = ${row!.id}`.pipe(Effect.orDie)
      yield* first.stop

      const second = yield* start(dir)
      // Delivered again, and done (no turn ran, so nothing pruned it).
      yield* until(Effect.map(journal(second.sql), (rows) => rows.length === 1 && rows[0]!.processed === 1))
      const sessions = NodeFs.readdirSync(NodePath.join(dir, ".kern/sessions"))
      expect(sessions.filter((name) => name.endsWith("_telegram-42.jsonl"))).toHaveLength(1)
      expect(sessionLines(dir).filter((line) => line._tag === "user" && line.text === "from a friend")).toHaveLength(1)
      expect((yield* server.modelRequests).length).toBe(1)
      yield* second.stop
    }), 120_000)
})
