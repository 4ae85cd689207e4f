import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Schema } from "effect"
import { AgentEventJson } from "../../../../src/channels/web/api.js"
import { decodeEvent, eventTypes } from "../../../../src/channels/web/ui/wire.js"
import { FakeReply } from "../../../support/fakeModelServer.js"
import { bearer, request, startServer } from "../harness.js"
import { rawBodyReader } from "../rawHttp.js"

const decodeWithSchema = Schema.decodeUnknownSync(AgentEventJson)

describe("the web UI's event decoder and the Schema", () => {
  it.live("read every frame of real turns alike: tools, text, a finish and its reply, and a failure as data", () =>
    Effect.scoped(Effect.gen(function*() {
      const { base, model } = yield* startServer()
      yield* model.reply(
        FakeReply.toolCalls([{ id: "c1", name: "glob", args: { pattern: "*.md" } }]),
        FakeReply.text("Five files."),
        FakeReply.error(401)
      )
      // The stream as raw as it comes off the socket, until both turns have finished.
      const response = yield* Effect.promise(() => fetch(`${base}/events`, { headers: bearer }))
      const { readUntil, cancel } = rawBodyReader(response)
      yield* readUntil((text) => text.includes(": connected"))
      const post = (text: string) =>
        request(`${base}/message`, { method: "POST", headers: { ...bearer, "content-type": "application/json" }, body: JSON.stringify({ text }) })
      // One turn after the other (a message sent while its conversation's turn runs would join that turn).
      const turn = (text: string) =>
        Effect.gen(function*() {
          const reading = yield* Effect.fork(readUntil((streamed) => streamed.includes("event: finish")))
          expect((yield* post(text)).status).toBe(202)
          return yield* Fiber.join(reading)
        })
      const streamed = (yield* turn("list the files")) + (yield* turn("and again"))
      yield* cancel

      const frames = streamed.split("\n").filter((line) => line.startsWith("data: ")).map((line) => line.slice(6))
      const types = new Set<string>()
      for (const frame of frames) {
        const bySchema = decodeWithSchema(frame)
        types.add(bySchema.type)
        // A field renamed (or dropped) on either side makes the two differ.
        expect(decodeEvent(frame), frame).toEqual(bySchema)
      }
      expect([...types].sort()).toEqual(["error", "finish", "incoming", "outgoing", "text-delta", "thinking", "tool-call", "tool-result"])
      const failed = frames.map(decodeEvent).find((event) => event?.type === "error")
      expect(failed?.type === "error" ? failed.failure : undefined).toMatchObject({ _tag: "ProviderFailed", reason: "auth", status: 401 })
      // Every type the stream may carry is one the UI knows.
      for (const type of types) expect(eventTypes).toContain(type)
    })), 60_000)
})
