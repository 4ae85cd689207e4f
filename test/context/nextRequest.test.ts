import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Stream } from "effect"
import { countTokens } from "gpt-tokenizer/encoding/o200k_base"
import type { ContextSegmentsResponse, SystemPromptResponse } from "../../src/channels/web/api.js"
import { ContextWindow } from "../../src/context/ContextWindow.js"
import { messageOverheadTokens } from "../../src/context/sentText.js"
import { bearer, request, startServer } from "../channels/web/harness.js"
import { initAgentFolder } from "../support/agentFolder.js"
import { FakeReply, type RecordedRequest } from "../support/fakeModelServer.js"
import { runKernIn } from "../support/inProcessCli.js"
import { writeSessionFixture } from "../support/sessionFixture.js"

/** A Chat Completions body as the fake model server received it. */
interface WireBody {
  readonly messages: ReadonlyArray<{
    readonly role: string
    readonly content: string | null
    readonly tool_calls?: ReadonlyArray<{ readonly function: { readonly name: string; readonly arguments: string } }>
  }>
  readonly tools?: ReadonlyArray<{ readonly function: { readonly name: string; readonly description?: string; readonly parameters: unknown } }>
}

const summaryOpen = "\n\n<conversation_summary>"

/**
 * The parts of a request as it went over the wire, counted with o200k_base as kern counts a context: the system
 * prompt up to its conversation summary, the summary, each tool's name, description and JSON Schema, and each message
 * as the model reads it plus its per-message overhead.
 */
const wireParts = (body: WireBody) => {
  const [system, ...messages] = body.messages
  const text = system?.content ?? ""
  const at = text.indexOf(summaryOpen)
  const tools = (body.tools ?? []).reduce(
    (sum, { function: f }) => sum + countTokens(`${f.name}\n${f.description ?? ""}\n${JSON.stringify(f.parameters)}`),
    0
  )
  const sent = (message: WireBody["messages"][number]) =>
    [message.content ?? "", ...(message.tool_calls ?? []).map((call) => `${call.function.name} ${call.function.arguments}`)]
      .filter((piece) => piece !== "")
      .join("\n")
  const raw = messages.reduce((sum, message) => sum + countTokens(sent(message)) + messageOverheadTokens, 0)
  const parts = {
    system: countTokens(at < 0 ? text : text.slice(0, at)),
    tools,
    summary: at < 0 ? 0 : countTokens(text.slice(at + 2)),
    raw
  }
  return { systemText: text, tokens: { ...parts, total: parts.system + parts.tools + parts.summary + parts.raw } }
}

const lastUserText = (body: WireBody) => body.messages.filter((m) => m.role === "user").at(-1)?.content ?? ""

const env = { OPENROUTER_API_KEY: "sk-test" }

describe("the next request: one preview for the turn, /context/* and kern context show", () => {
  it.live("for the same folder state, /context/segments, /context/system, kern context show and the request the next turn sends agree token for token", () =>
    Effect.scoped(Effect.gen(function*() {
      // A real folder (memory files in the system prompt) with a long conversation: the first turn summarizes it, so
      // the next request carries a conversation summary, a cut and a raw window.
      const dir = initAgentFolder()
      writeSessionFixture(dir, 3_000)
      const { base, client, context, model } = yield* startServer({
        dir,
        config: { recall: false, embeddingModel: false, maxContextTokens: 20_000 },
        model: { fallback: FakeReply.text("We checked the router: the DHCP range moved and DNS is on the pi.") }
      })
      const turn = (text: string) =>
        Effect.gen(function*() {
          const events = yield* client.events()
          const { turnId } = yield* client.send({ text })
          yield* events.pipe(Stream.takeUntil((e) => e.type === "finish" && e.turnId === turnId), Stream.runDrain)
          // The segments and summaries a turn leaves to the background are part of the state the preview plans from.
          yield* Context.get(context, ContextWindow).settled()
          // So is the running agent's catch-up of a session far behind (the first turn's, here).
          yield* Context.get(context, ContextWindow).caughtUp
        })
      yield* turn("what changed on the router?")

      const web = (yield* request(`${base}/context/segments`, { headers: bearer })).json as ContextSegmentsResponse
      const system = (yield* request(`${base}/context/system`, { headers: bearer })).json as SystemPromptResponse
      const shown = yield* Effect.promise(() => runKernIn(["context", "show", "--json", "--dir", dir], { env }))
      expect(shown.status, shown.stderr).toBe(0)
      const cli = JSON.parse(shown.stdout) as ContextSegmentsResponse & { readonly system: ReadonlyArray<{ readonly text: string }> }
      expect(web.injected.length, "the state has a conversation summary").toBeGreaterThan(0)
      expect(web.cut).toBeGreaterThan(0)

      // The web UI and the CLI show the same request, part for part, and say which: a preview of the next one.
      expect(cli.tokens).toEqual(web.tokens)
      expect({ messages: cli.messages, cut: cli.cut }).toEqual({ messages: web.messages, cut: web.cut })
      expect(cli.system.map((s) => s.text)).toEqual(system.sections.map((s) => s.text))
      expect([web.request, system.request, cli.request]).toEqual(["next", "next", "next"])
      // And say alike what the figures leave out.
      expect(web.leftOut[0]).toBe("the next turn's own message")
      expect([system.leftOut, cli.leftOut]).toEqual([web.leftOut, web.leftOut])

      // The next turn: the request the model gets is the preview plus the turn's own message, nothing else.
      const question = "and does DNS still resolve the pi?"
      yield* turn(question)
      const sent = (yield* model.modelRequests).filter((r: RecordedRequest) => lastUserText(r.body as WireBody).endsWith(question))
      expect(sent).toHaveLength(1)
      const body = sent[0]!.body as WireBody
      const wire = wireParts(body)
      const ownMessage = countTokens(lastUserText(body)) + messageOverheadTokens
      expect(wire.tokens).toEqual({ ...web.tokens, raw: web.tokens.raw + ownMessage, total: web.tokens.total + ownMessage })
      expect(wire.systemText).toBe(system.sections.map((s) => s.text).join("\n\n"))
      expect(system.totalTokens).toBe(countTokens(wire.systemText))
    })), 120_000)
})
