import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { startServer } from "../channels/web/harness.js"
import { fakeSearch } from "../support/fakeSearch.js"
import { FakeReply } from "../support/fakeModelServer.js"
import { offeredTools, toolResultsById } from "../support/modelRequests.js"

const braveKey = "BSA-offer-test-key-0123456789"

describe("web_search in a turn", () => {
  it.live("without a search provider the model is not offered web_search (webfetch stays)", () =>
    Effect.scoped(Effect.gen(function*() {
      const { runtime, model } = yield* startServer({ config: { recall: false } })
      yield* model.reply(FakeReply.text("ok"))
      yield* runtime.submit({ interface: "web", channel: "web", userId: "operator", text: "search the web" })
      const [first] = yield* model.awaitRequests(1)
      const tools = offeredTools(first!.body)
      expect(tools).toContain("webfetch")
      expect(tools).not.toContain("web_search")
    })))

  it.live("with one it is offered; its results reach the model redacted like every tool's", () =>
    Effect.scoped(Effect.gen(function*() {
      const search = yield* fakeSearch({ key: braveKey })
      // A page that happens to show the key: the model must never see it.
      search.script({
        status: 200,
        body: JSON.stringify({
          type: "search",
          web: { results: [{ title: "Leaked", url: "https://example.com/leak", description: `the key is ${braveKey}` }] }
        })
      })
      const { runtime, model } = yield* startServer({
        config: { recall: false, webSearch: { provider: "brave", url: search.origin } },
        files: { ".kern/.env": `BRAVE_API_KEY=${braveKey}\n` }
      })
      yield* model.reply(FakeReply.toolCalls([{ id: "s1", name: "web_search", args: { query: "kern" } }]), FakeReply.text("done"))
      yield* runtime.submit({ interface: "web", channel: "web", userId: "operator", text: "search the web" })
      const [first, second] = yield* model.awaitRequests(2)
      expect(offeredTools(first!.body)).toContain("web_search")
      expect(search.requests[0]!.headers["x-subscription-token"]).toBe(braveKey)
      const result = toolResultsById(second!.body)["s1"]!
      expect(result).toContain("https://example.com/leak")
      expect(result).toContain("[redacted:BRAVE_API_KEY]")
      expect(result).not.toContain(braveKey)
    })))
})
