import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import { interruptedText } from "../../../src/channels/leftoverReplies.js"
import { placeholder as thinking } from "../../../src/channels/slack/Replies.js"
import { FakeReply, make as makeFakeModel } from "../../support/fakeModelServer.js"
import * as FakeSlack from "../../support/fakeSlack.js"
import { advanceUntil, agentFolder, pairUser, startSlackAgent, textOf } from "./harness.js"

const realPause = Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 10)))

describe("Slack replies across restarts", () => {
  it.scoped("a kill mid-turn leaves no \"_thinking…_\" behind: the next start edits it, once, to say the turn was interrupted", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const slack = yield* FakeSlack.make()
      const dir = agentFolder(model)
      const firstScope = yield* Scope.make()
      const first = yield* startSlackAgent({ dir, slack }).pipe(Scope.extend(firstScope))
      yield* pairUser(first.pairings, "U1")
      yield* model.reply(FakeReply.text("too late", { delay: "1 hour" }))
      yield* slack.awaitConnections(1)
      yield* slack.dm("U1", "a long question")
      yield* model.awaitRequests(1)
      const [posted] = yield* slack.awaitCalls("chat.postMessage", 1)
      expect(textOf(posted!)).toBe(thinking)
      // Waits (bounded, on real time) until the placeholder is remembered in kern.db: the moment a kill leaves it.
      for (let tries = 0; tries < 1000; tries++) {
        const rows = yield* first.sql<{ readonly n: number }>`SELECT count(*) AS n FROM reply_placeholders`
        if ((rows[0]?.n ?? 0) > 0) break
        yield* realPause
      }
      yield* Scope.close(firstScope, Exit.void)

      const interrupted = `:warning: ${interruptedText}`
      for (let start = 0; start < 2; start++) {
        const scope = yield* Scope.make()
        yield* startSlackAgent({ dir, slack }).pipe(Scope.extend(scope))
        yield* slack.awaitConnections(2 + start)
        if (start === 0) yield* advanceUntil(slack.awaitCall("chat.update", (call) => textOf(call) === interrupted))
        yield* Scope.close(scope, Exit.void)
      }
      const ts = (yield* slack.posted)[0]?.ts
      const updates = (yield* slack.callsOf("chat.update")).filter((call) => call.body["ts"] === ts)
      expect(updates.map(textOf)).toEqual([interrupted])
      expect((yield* model.modelRequests).length).toBe(1)
    }))
})
