import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Option, TestClock } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { buildSystemPrompt } from "../../src/context/systemPrompt.js"
import * as AgentConfig from "../../src/config/AgentConfig.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import { NotesSummary } from "../../src/memory/NotesSummary.js"
import * as NotesSummaryLayer from "../../src/memory/NotesSummary.js"
import type { SqlClient } from "@effect/sql"
import type { DatabaseError } from "../../src/storage/Database.js"
import { databases, reopenable } from "../support/databases.js"
import { FakeReply, type FakeModelServerShape, make as makeFakeServer } from "../support/fakeModelServer.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"
import * as SpendGuard from "../../src/model/SpendGuard.js"

const days = (from: number, count: number) =>
  Object.fromEntries(Array.from({ length: count }, (_, i) => [`notes/2026-01-${String(from + i).padStart(2, "0")}.md`, `day ${from + i}\n`]))

/** NotesSummary over a fake model, with kern.db on `db`; an agent folder made with `files`, or the one given. */
const summariesOver = (db: Layer.Layer<SqlClient.SqlClient, DatabaseError>, files: Record<string, string>, at?: string) =>
  Effect.gen(function*() {
    const server = yield* makeFakeServer
    const dir = at ?? NodePath.join(makeTempDir(), "agent")
    writeFiles(dir, { ".kern/config.json": JSON.stringify({ model: "m", summaryModel: "cheap", baseURL: server.baseURL, api: "chat" }), ...files })
    const platform = Layer.merge(NodeContext.layer, Layer.succeed(ProcessEnv, { OPENROUTER_API_KEY: "sk-test" }))
    const layer = NotesSummaryLayer.layer.pipe(
      Layer.provideMerge(SpendGuard.layer),
      Layer.provideMerge(Layer.mergeAll(AgentConfig.layer(dir), db, NodeHttpClient.layerUndici)),
      Layer.provideMerge(platform)
    )
    const context = yield* Layer.build(layer)
    return { server, dir, context, summary: Context.get(context, NotesSummary) }
  })

const bodies = (server: FakeModelServerShape) =>
  Effect.map(server.requests, (requests) => requests.map((r) => r.body as { model: string; messages: Array<{ content: unknown }> }))

describe.each(databases)("notes summary on $dialect", (database) => {
  const summaries = (files: Record<string, string>) => summariesOver(database.layer, files)

  it.scoped("no notes before the latest: no summary and no model call", () =>
    Effect.gen(function*() {
      const { server, summary } = yield* summaries(days(1, 1))
      expect(Option.isNone(yield* summary.current)).toBe(true)
      yield* summary.settled()
      expect((yield* server.requests).length).toBe(0)
    }))

  it.scoped("a miss starts one regeneration of the 5 notes before the latest with summaryModel; then hits without a call", () =>
    Effect.gen(function*() {
      const { server, summary } = yield* summaries(days(1, 7))
      yield* server.reply(FakeReply.text("Days 2 to 6: nothing much."))
      expect(Option.isNone(yield* summary.current)).toBe(true)
      yield* summary.settled()
      const hit = yield* summary.current
      expect(Option.getOrThrow(hit)).toEqual({
        text: "Days 2 to 6: nothing much.",
        sources: ["notes/2026-01-02.md", "notes/2026-01-03.md", "notes/2026-01-04.md", "notes/2026-01-05.md", "notes/2026-01-06.md"],
        fresh: true
      })
      yield* summary.current
      const [request, ...more] = yield* bodies(server)
      expect(more).toEqual([])
      expect(request!.model).toBe("cheap")
      const prompt = JSON.stringify(request!.messages)
      for (const day of [2, 3, 4, 5, 6]) expect(prompt).toContain(`day ${day}`)
      expect(prompt).not.toContain("day 1\\n")
      expect(prompt).not.toContain("day 7")
    }))

  it.scoped("a new latest note: the stale summary is served at once, one regeneration runs however many turns ask", () =>
    Effect.gen(function*() {
      const { dir, server, summary } = yield* summaries(days(1, 3))
      yield* server.reply(FakeReply.text("first"), FakeReply.text("second", { delay: "10 seconds" }))
      yield* summary.current
      yield* summary.settled()
      writeFiles(dir, days(4, 1))
      for (let turn = 0; turn < 3; turn++) {
        const stale = Option.getOrThrow(yield* summary.current)
        expect(stale).toMatchObject({ text: "first", fresh: false })
      }
      yield* server.awaitRequests(2)
      yield* TestClock.adjust("10 seconds")
      yield* summary.settled()
      expect(Option.getOrThrow(yield* summary.current)).toMatchObject({ text: "second", fresh: true })
      expect((yield* server.requests).length).toBe(2)
    }))

  it.scoped("a failed generation is not stored: the stale summary stays and a later turn tries again", () =>
    Effect.gen(function*() {
      const { dir, server, summary } = yield* summaries(days(1, 3))
      yield* server.reply(FakeReply.text("first"), FakeReply.error(400), FakeReply.text("again"))
      yield* summary.current
      yield* summary.settled()
      NodeFs.appendFileSync(NodePath.join(dir, "notes/2026-01-02.md"), "an edit\n")
      expect(Option.getOrThrow(yield* summary.current)).toMatchObject({ text: "first", fresh: false })
      yield* summary.settled()
      expect(Option.getOrThrow(yield* summary.current)).toMatchObject({ text: "first", fresh: false })
      yield* summary.settled()
      expect(Option.getOrThrow(yield* summary.current)).toMatchObject({ text: "again", fresh: true })
      expect((yield* server.requests).length).toBe(3)
    }))

  it.scoped("the system prompt carries the summary after the latest note, marked stale when it is", () =>
    Effect.gen(function*() {
      const { context, server, summary } = yield* summaries(days(1, 3))
      yield* server.reply(FakeReply.text("It was quiet."))
      yield* summary.current
      yield* summary.settled()
      const prompt = yield* buildSystemPrompt.pipe(Effect.provide(context))
      expect(prompt).toContain("<notes_summary of=\"notes/2026-01-01.md, notes/2026-01-02.md\">\nIt was quiet.\n</notes_summary>")
      expect(prompt.indexOf("<notes_summary")).toBeGreaterThan(prompt.indexOf("<document path=\"notes/2026-01-03.md\">"))
    }))

  it.scoped("the stored summary is what a restarted agent serves, fresh, without asking the model again", () =>
    Effect.gen(function*() {
      const db = yield* reopenable(database)
      const first = yield* summariesOver(db, days(1, 3))
      yield* first.server.reply(FakeReply.text("Two quiet days."))
      yield* first.summary.current
      yield* first.summary.settled()
      const restarted = yield* summariesOver(db, {}, first.dir)
      expect(Option.getOrThrow(yield* restarted.summary.current)).toEqual({
        text: "Two quiet days.",
        sources: ["notes/2026-01-01.md", "notes/2026-01-02.md"],
        fresh: true
      })
      yield* restarted.summary.settled()
      expect((yield* restarted.server.requests).length).toBe(0)
    }))
})
