import { describe, expect, it } from "@effect/vitest"
import { Effect, Schedule } from "effect"
import { type ChildProcess } from "node:child_process"
import { initAgentWithModel } from "../support/agentFolder.js"
import { runKern } from "../support/cli.js"
import { FakeReply, make as makeFakeModel } from "../support/fakeModelServer.js"
import * as FakeSlack from "../support/fakeSlack.js"
import { make as makeFakeTelegram } from "../support/fakeTelegram.js"
import { fakePeersEnv } from "../support/fakePeers.js"

const alice = { id: 42, first_name: "Alice" }

describe("chat channels in kern run", () => {
  it.live("kern run starts Telegram and Slack: a stranger pairs with kern pair, talks to the agent, gets a proactive message; kern status shows both connected", () =>
    Effect.scoped(Effect.gen(function*() {
      const model = yield* makeFakeModel
      const telegram = yield* makeFakeTelegram()
      const slack = yield* FakeSlack.make()
      const dir = initAgentWithModel(model.baseURL, { recall: false, heartbeatInterval: 0 })
      const env = fakePeersEnv(telegram, slack)
      let child: ChildProcess | undefined
      yield* Effect.addFinalizer(() => Effect.sync(() => child?.kill("SIGKILL")))
      const done = runKern(["run", dir], { env, stdin: true, onSpawn: (spawned) => (child = spawned) })
      yield* telegram.awaitCalls("getUpdates", 1)

      // A stranger: a pairing code, nothing for the model.
      yield* telegram.message({ from: alice, text: "hello?" })
      const [answer] = yield* telegram.awaitChat(alice.id, (messages) => messages.length > 0)
      const code = /kern pair (KERN-[A-Z0-9]{4})/.exec(answer!.text)?.[1]
      expect(code).toBeDefined()
      expect(yield* model.modelRequests).toHaveLength(0)
      const paired = yield* Effect.promise(() => runKern(["pair", code!, dir], { env }))
      expect(paired.status).toBe(0)

      // Paired: her message is a turn, answered in her chat.
      yield* model.reply(FakeReply.text("Hi Alice, how can I help?"))
      yield* telegram.message({ from: alice, text: "what can you do?" })
      yield* telegram.awaitChat(alice.id, (messages) => messages.some((m) => m.text.includes("how can I help")))
      expect(JSON.stringify((yield* model.modelRequests)[0]!.body)).toContain("[via telegram, 42, user: 42")

      // The operator asks the agent to write to her: the message tool reaches her chat.
      yield* model.reply(
        FakeReply.toolCalls([{ id: "m1", name: "message", args: { userId: "42", interface: "telegram", text: "The build is **green**." } }]),
        FakeReply.text("Told her.")
      )
      child!.stdin!.write("tell alice the build is green\n")
      yield* telegram.awaitChat(alice.id, (messages) => messages.some((m) => m.text === "The build is <b>green</b>."))

      // Slack runs beside it: a stranger's DM gets a code in the DM; nothing reaches the model. The operator's turn
      // ends with its own last request ("Told her."), which may still be on its way when her chat shows the message.
      yield* slack.awaitConnections(1)
      const before = yield* model.modelRequests.pipe(
        Effect.map((requests) => requests.length),
        Effect.filterOrFail((count) => count >= 3),
        Effect.retry(Schedule.spaced("50 millis").pipe(Schedule.upTo("20 seconds")))
      )
      yield* slack.dm("U9", "hi from slack")
      const codeCall = yield* slack.awaitCall("chat.postMessage", (call) => String(call.body["text"]).includes("kern pair KERN-"))
      expect(codeCall!.body).toMatchObject({ channel: "DU9" })
      expect(yield* model.modelRequests).toHaveLength(before)

      const status = yield* Effect.promise(() => runKern(["status", dir, "--json"], { env })).pipe(
        Effect.map((result) => JSON.parse(result.stdout) as { channels: ReadonlyArray<{ interface: string; state: string; detail: string }> }),
        Effect.filterOrFail((s) => s.channels.every((c) => c.state === "connected")),
        Effect.retry(Schedule.spaced("200 millis").pipe(Schedule.upTo("20 seconds")))
      )
      expect(status.channels.map((c) => [c.interface, c.state])).toEqual([["telegram", "connected"], ["slack", "connected"]])
      const text = (yield* Effect.promise(() => runKern(["status", dir], { env }))).stdout
      expect(text).toMatch(/^telegram: +connected since /m)
      expect(text).toMatch(/^slack: +connected since /m)

      child!.stdin!.end()
      const result = yield* Effect.promise(() => done)
      expect(result.status).toBe(0)
      // The terminal showed what the message tool sent.
      expect(result.stdout).toContain("[→ telegram 42] The build is **green**.")
    })))
})
