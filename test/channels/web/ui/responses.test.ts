import { HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Schedule, Schema, Stream } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { KernApi } from "../../../../src/channels/web/KernApi.js"
import { decodeHistory } from "../../../../src/channels/web/ui/historyItems.js"
import {
  decodeActivity,
  decodeDailyNotes,
  decodeHits,
  decodePage,
  decodeSessions,
  decodeStats,
  decodeSummary,
  decodeSystem
} from "../../../../src/channels/web/ui/memory/responses.js"
import {
  decodeApprovals,
  decodeContextSegments,
  decodeSegments,
  decodeSummarizer,
  isObject,
  type Json
} from "../../../../src/channels/web/ui/wire.js"
import { decodeUsers, senderLabel } from "../../../../src/channels/web/ui/userNames.js"
import { decodeAdded, decodeSchedules } from "../../../../src/channels/web/ui/schedules/responses.js"
import * as Database from "../../../../src/storage/Database.js"
import { ScheduleStore } from "../../../../src/tools/schedules/ScheduleStore.js"
import { PairingStore } from "../../../../src/users/PairingStore.js"
import { FakeReply } from "../../../support/fakeModelServer.js"
import { startServer, token } from "../harness.js"

/**
 * The web UI's decoders of the routes' answers, run on real answers of a real server as KernApi's schemas put them on
 * the wire: each answer is fetched with the client derived from KernApi (decoded with the route's success schema),
 * encoded again with that schema, and given to the UI's decoder as JSON. What the decoder makes of it must be what the
 * answer says, field by field, so a field renamed on either side (the schema or the decoder) fails here.
 */

type Server = Effect.Effect.Success<ReturnType<typeof startServer>>

const clientOf = (server: Server) =>
  Effect.gen(function*() {
    const http = yield* Layer.build(NodeHttpClient.layerUndici)
    return yield* HttpApiClient.make(KernApi, {
      baseUrl: server.base,
      transformClient: HttpClient.mapRequest(HttpClientRequest.bearerToken(token))
    }).pipe(Effect.provide(http))
  })

/** The answer as the server puts it on the wire: encoded with the route's success schema in KernApi, as JSON. */
const onWire = (group: string, endpoint: string) => (value: unknown) => {
  const schema = KernApi.groups[group]?.endpoints[endpoint]?.successSchema
  if (schema === undefined) return Effect.die(`KernApi has no ${group}.${endpoint}`)
  return Effect.map(Schema.encodeUnknown(Schema.make(schema.ast))(value), (encoded): Json => JSON.parse(JSON.stringify(encoded)))
}

const finished = (server: Server, text: string) =>
  Effect.gen(function*() {
    const events = yield* server.client.events()
    const { turnId } = yield* server.client.send({ text })
    yield* events.pipe(Stream.takeUntil((e) => e.type === "finish" && e.turnId === turnId), Stream.runDrain)
  })

describe("the web UI's decoders, on answers encoded with KernApi's schemas", () => {
  it.live("sessions, activity, history, the system prompt, the context's figures, the segment tree, the notes summary, the summarizer", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* startServer({
        sessionMessages: 2_000,
        config: { maxContextTokens: 12_000, recall: false, embeddingModel: false },
        model: { fallback: FakeReply.text("We checked the router: the DHCP range moved and DNS is on the pi.") }
      })
      const api = yield* clientOf(server)
      yield* finished(server, "what changed on the router?")

      const sessions = yield* api.sessions.list()
      expect(decodeSessions(yield* onWire("sessions", "list")(sessions))).toEqual(
        sessions.sessions.map((s) => ({
          id: s.id,
          createdAt: s.createdAt,
          modifiedAt: s.modifiedAt,
          messages: s.messages,
          bytes: s.bytes,
          current: s.current,
          conversation: s.conversation,
          person: s.person,
          channel: s.channel
        })).reverse()
      )

      const activity = yield* api.sessions.activity({ path: { id: sessions.currentSessionId } })
      expect(activity.total).toBeGreaterThan(0)
      expect(decodeActivity(yield* onWire("sessions", "activity")(activity))).toEqual({
        total: activity.total,
        roles: activity.roles,
        daily: activity.daily.slice(-30).map((d) => ({ label: d.date.slice(5), count: d.count })),
        hourly: activity.hourly.map((h) => ({ label: String(h.hour), count: h.count }))
      })

      const history = yield* api.sessions.history({ urlParams: { limit: 3 } })
      expect(history.nextBefore).not.toBeNull()
      const historyJson = yield* onWire("sessions", "history")(history)
      expect(decodePage(historyJson)).toMatchObject({
        before: history.nextBefore,
        messages: history.messages.map(({ index, message }) => ({
          index,
          at: message.at,
          role: message._tag === "tool" ? `tool ${message.toolName}` : message._tag
        })).reverse()
      })
      const question = history.messages.find((m) => m.message._tag === "user")
      expect(question).toBeDefined()
      const page = decodeHistory(historyJson, "h")
      expect(page?.before).toBe(String(history.nextBefore))
      expect(JSON.stringify(page?.items)).toContain("what changed on the router?")

      const system = yield* api.context.system()
      expect(decodeSystem(yield* onWire("context", "system")(system))).toEqual({
        request: system.request,
        sections: system.sections.map((s) => ({ kind: s.kind, source: s.source, text: s.text, chars: s.chars, tokens: s.tokens, counted: true })),
        totalChars: system.totalChars,
        totalTokens: system.totalTokens,
        counted: true
      })

      const next = yield* api.context.next()
      expect(next.injected.length).toBeGreaterThan(0)
      expect(decodeContextSegments(yield* onWire("context", "next")(next))).toEqual(next)

      const tree = yield* api.context.segments({ urlParams: {} })
      expect(tree.segments.length).toBeGreaterThan(0)
      expect(decodeSegments(yield* onWire("context", "segments")(tree))).toEqual(tree)

      NodeFs.mkdirSync(NodePath.join(server.dir, "notes"), { recursive: true })
      NodeFs.writeFileSync(NodePath.join(server.dir, "notes/2026-01-01.md"), "fed the heron\n")
      NodeFs.writeFileSync(NodePath.join(server.dir, "notes/2026-01-02.md"), "today\n")
      const summary = yield* api.notes.regenerate()
      expect(summary.summary).not.toBeNull()
      expect(decodeSummary(yield* onWire("notes", "regenerate")(summary))).toEqual(summary)

      const daily = yield* api.notes.daily()
      expect(daily.notes.map((n) => n.path)).toEqual(["notes/2026-01-02.md", "notes/2026-01-01.md"])
      expect(decodeDailyNotes(yield* onWire("notes", "daily")(daily))).toEqual(daily)

      // A paired user by name (hostile, as a name may be: the page renders it as text); a pending one is not listed.
      const pairings = Context.get(server.context, PairingStore)
      const ada = yield* pairings.request({ interface: "slack", userId: "U0000000001", chatId: "D0000000001", displayName: "Ada <b>L</b>" })
      yield* pairings.approve(ada.code, "test")
      yield* pairings.request({ interface: "telegram", userId: "42", chatId: "42", displayName: "Pending Pete" })
      const users = yield* api.users.list()
      expect(users.users).toEqual([{ interface: "slack", userId: "U0000000001", chatId: "D0000000001", name: "Ada <b>L</b>", role: "user" }])
      expect(JSON.stringify(users)).not.toContain("KERN-")
      const names = decodeUsers(yield* onWire("users", "list")(users)) ?? new Map<string, string>()
      expect(senderLabel(names, { interface: "slack", channel: "D0000000001", userId: "U0000000001" })).toBe("Ada <b>L</b> · slack")
      expect(senderLabel(names, { interface: "telegram", channel: "42", userId: "42" })).toBe("telegram · 42")

      const status = yield* api.status.status()
      const summarizer = status.summarizer
      expect(summarizer).toBeDefined()
      const statusJson = yield* onWire("status", "status")(status)
      expect(isObject(statusJson) ? decodeSummarizer(statusJson) : undefined).toEqual(summarizer && {
        state: summarizer.state,
        consecutiveFailures: summarizer.consecutiveFailures,
        lastError: summarizer.lastError ?? undefined,
        lastSuccessAt: summarizer.lastSuccessAt ?? undefined,
        nextAttemptAt: summarizer.nextAttemptAt ?? undefined,
        lagMessages: summarizer.lagMessages,
        fallbackCut: summarizer.fallbackCut
      })
    })), 120_000)

  it.live("recall's figures and hits, the approvals waiting", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* startServer({ config: { approvalMode: "ask" } })
      const api = yield* clientOf(server)
      yield* server.model.reply(FakeReply.text("The heron nests by the old mill."))
      yield* finished(server, "where does the heron nest?")
      // The running agent indexes a turn in the background once it is done: the search catches up within moments.
      const found = yield* api.recall.search({ urlParams: { q: "heron mill", limit: 3 } }).pipe(
        Effect.filterOrFail((result) => result.hits.length > 0),
        Effect.retry(Schedule.spaced("100 millis").pipe(Schedule.intersect(Schedule.recurs(100))))
      )
      expect(decodeHits(yield* onWire("recall", "search")(found))).toEqual(found.hits.map((hit) => ({
        text: hit.text,
        source: hit.source,
        where: hit.sessionId ?? hit.path,
        startedAt: hit.startedAt,
        endedAt: hit.endedAt,
        range: hit.sessionId === null ? undefined : { session: hit.sessionId, start: hit.messageStart, end: hit.messageEnd }
      })))
      const stats = yield* api.recall.stats()
      expect(stats.messages).toBeGreaterThan(0)
      expect(decodeStats(yield* onWire("recall", "stats")(stats))).toEqual(expect.arrayContaining([
        ["messages", stats.messages.toLocaleString()],
        ["chunks", stats.chunks.toLocaleString()],
        ["sessions", stats.sessions.toLocaleString()]
      ]))

      yield* server.model.reply(FakeReply.toolCalls([{ id: "call_1", name: "bash", args: { command: "touch approved.marker" } }]))
      const events = yield* server.client.events()
      yield* server.client.send({ text: "make the marker" })
      yield* events.pipe(Stream.takeUntil((e) => e.type === "approval"), Stream.runDrain)
      const waiting = yield* api.approvals.list()
      expect(waiting.approvals).toHaveLength(1)
      expect(decodeApprovals(yield* onWire("approvals", "list")(waiting))).toEqual(waiting.approvals)
    })), 120_000)

  it.live("the schedules, with runs fired and missed, and one just added", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* startServer({ config: { recall: false, timezone: "UTC", heartbeatInterval: 30 } })
      const api = yield* clientOf(server)
      const added = yield* api.schedules.add({ payload: { prompt: "check the backups", cron: "30 7 * * 1-5", timezone: "Europe/Berlin" } })
      expect(decodeAdded(yield* onWire("schedules", "add")(added))).toEqual(added.schedule)
      yield* api.schedules.add({ payload: { prompt: "renew the domain", at: "in 2 days at 10:00" } })
      const nextDueMs = added.schedule.nextDueMs ?? 0
      yield* Effect.gen(function*() {
        const store = yield* ScheduleStore
        yield* store.settle(added.schedule.id, nextDueMs, { fired: [nextDueMs - 86_400_000], missed: [nextDueMs - 3 * 86_400_000] }, nextDueMs)
      }).pipe(
        Effect.provide(ScheduleStore.Default.pipe(Layer.provide(Database.layer({ filename: NodePath.join(server.dir, ".kern", "kern.db") })))),
        Effect.orDie
      )
      const listed = yield* api.schedules.list()
      expect(listed.schedules.map((s) => [s.fired, s.missed, s.lastFired === null, s.lastMissed === null])).toEqual([[1, 1, false, false], [0, 0, true, true]])
      expect(listed.heartbeat).toMatchObject({ id: 0, when: "every 30 min" })
      expect(decodeSchedules(yield* onWire("schedules", "list")(listed))).toEqual({ schedules: listed.schedules, heartbeat: listed.heartbeat })
      // A schedule of another shape is left out, never guessed at; an answer without the list is no answer.
      expect(decodeSchedules({ schedules: [{ id: 1, kind: "weekly" }], heartbeat: { id: 3, kind: "heartbeat" } }))
        .toEqual({ schedules: [], heartbeat: null })
      expect(decodeSchedules({ items: [] })).toBeUndefined()
    })), 120_000)
})
