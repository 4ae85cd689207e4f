import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Schedule, Stream } from "effect"
import * as NodeFs from "node:fs"
import type { AgentEvent } from "../../../src/channels/web/api.js"
import { FakeReply } from "../../support/fakeModelServer.js"
import { bearer, request, startServer } from "./harness.js"
import { rawBodyReader } from "./rawHttp.js"

const json = { ...bearer, "content-type": "application/json" }

/** Until `check` holds for the answer of `call` (a generous bound: this is a condition, not a wait). */
const until = <A>(call: Effect.Effect<A>, check: (a: A) => boolean) =>
  call.pipe(Effect.filterOrFail(check), Effect.retry(Schedule.spaced("20 millis").pipe(Schedule.upTo("60 seconds"))), Effect.orDie)

describe("HTTP API: stopping a turn", () => {
  it.live("POST /turns/:turnId/stop ends the running turn as Stopped; it leaves the inbox and stays in the history", () =>
    Effect.scoped(Effect.gen(function*() {
      const { base, model, client } = yield* startServer()
      // The answer starts and then goes quiet, as a long one does.
      yield* model.reply(FakeReply.text("Let me think about this for a long while", { hangAfter: 3 }))
      const events = yield* client.events()
      const sent = yield* request(`${base}/message`, { method: "POST", headers: json, body: JSON.stringify({ text: "think hard" }) })
      const turnId = (sent.json as { turnId: string }).turnId
      yield* model.awaitRequests(1)

      // The operator's route, behind the same gate as every other.
      expect((yield* request(`${base}/turns/${turnId}/stop`, { method: "POST" })).status).toBe(401)
      const stopped = yield* request(`${base}/turns/${turnId}/stop`, { method: "POST", headers: bearer })
      expect(stopped.status).toBe(200)
      expect(stopped.json).toEqual({ stopped: [turnId] })

      const turn = yield* events.pipe(
        Stream.filter((e: AgentEvent) => "turnId" in e && e.turnId === turnId),
        Stream.takeUntil((e) => e.type === "finish"),
        Stream.runCollect,
        Effect.map(Chunk.toReadonlyArray)
      )
      const error = turn.find((e) => e.type === "error")
      expect(error?.type === "error" ? error.failure : undefined).toEqual({ _tag: "Stopped", by: "operator", message: "stopped by the operator" })

      // Over: stopping it again finds nothing; the message is out of the inbox, so a restart will not answer it.
      const again = yield* request(`${base}/turns/${turnId}/stop`, { method: "POST", headers: bearer })
      expect(again.status).toBe(404)
      expect(again.json).toEqual({ error: expect.stringContaining(`no running turn ${turnId}`) })
      expect((yield* request(`${base}/stop`, { method: "POST", headers: bearer })).json).toEqual({ stopped: [] })
      const status = yield* until(request(`${base}/status`, { headers: bearer }), (a) => (a.json as { runtime: { inbox: number } }).runtime.inbox === 0)
      expect((status.json as { runtime: { inbox: number; queued: number } }).runtime).toMatchObject({ inbox: 0, queued: 0 })

      const history = yield* request(`${base}/history`, { headers: bearer })
      const messages = (history.json as { messages: ReadonlyArray<{ message: { _tag: string } }> }).messages.map((m) => m.message)
      expect(messages.map((m) => m._tag)).toEqual(["user", "assistant", "turn-failed"])
      expect(messages[2]).toMatchObject({ failure: "Stopped", message: "stopped by the operator", turn: turnId })
      expect(yield* model.modelRequests).toHaveLength(1)
    })), 120_000)

  it.live("POST /stop stops every running turn; a failed turn's SSE frame is named turn-error, never error", () =>
    Effect.scoped(Effect.gen(function*() {
      const { base, model } = yield* startServer()
      yield* model.reply(FakeReply.text("never finished", { hangAfter: 1 }))
      const stream = yield* Effect.promise(() => fetch(`${base}/events`, { headers: { ...bearer, accept: "text/event-stream" } }))
      const body = rawBodyReader(stream)
      yield* Effect.addFinalizer(() => body.cancel)
      yield* body.readUntil((text) => text.includes(": connected"))
      const sent = yield* request(`${base}/message`, { method: "POST", headers: json, body: JSON.stringify({ text: "go" }) })
      const turnId = (sent.json as { turnId: string }).turnId
      yield* model.awaitRequests(1)
      const stopped = yield* until(
        request(`${base}/stop`, { method: "POST", headers: bearer }),
        (a) => (a.json as { stopped: ReadonlyArray<string> }).stopped.length > 0
      )
      expect(stopped.json).toEqual({ stopped: [turnId] })
      const frames = yield* body.readUntil((text) => text.includes("event: finish\n"))
      // Browsers hand an event named `error` to EventSource.onerror, the broken connection's handler.
      expect(frames).toMatch(/\nevent: turn-error\ndata: \{[^\n]*"type":"error"[^\n]*"_tag":"Stopped"/)
      expect(frames).not.toMatch(/^event: error$/m)
    })), 120_000)
})

describe("HTTP API: stopping a turn that waits for approval", () => {
  it.live("the call is not run, and its approval is resolved for every client (approval-resolved), not left pending", () =>
    Effect.scoped(Effect.gen(function*() {
      const { base, model, client, dir } = yield* startServer({ config: { approvalMode: "ask" } })
      const marker = `${dir}/stop-marker`
      yield* model.reply(FakeReply.toolCalls([{ id: "c1", name: "bash", args: { command: `touch ${marker}` } }]))
      const events = yield* client.events()
      yield* request(`${base}/message`, { method: "POST", headers: json, body: JSON.stringify({ text: "make the marker" }) })
      const listed = yield* until(request(`${base}/approvals`, { headers: bearer }), (a) => (a.json as { approvals: ReadonlyArray<unknown> }).approvals.length === 1)
      const id = (listed.json as { approvals: ReadonlyArray<{ id: string }> }).approvals[0]!.id
      yield* request(`${base}/stop`, { method: "POST", headers: bearer })
      const resolved = yield* events.pipe(
        Stream.filter((e: AgentEvent) => e.type === "approval-resolved"),
        Stream.take(1),
        Stream.runCollect,
        Effect.map(Chunk.toReadonlyArray)
      )
      expect(resolved[0]).toMatchObject({ id, approved: false, outcome: "denied", by: "the end of its turn" })
      expect((yield* request(`${base}/approvals`, { headers: bearer })).json).toEqual({ approvals: [] })
      expect(NodeFs.existsSync(marker)).toBe(false)
    })), 120_000)
})
