import * as NodeContext from "@effect/platform-node/NodeContext"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, PubSub, Queue, Schema, Scope } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import { AgentRuntime } from "../../src/runtime/AgentRuntime.js"
import { Approvals, channelUser, localOperator } from "../../src/runtime/Approvals.js"
import * as Layers from "../../src/runtime/layers.js"
import { SubAgentStore } from "../../src/tools/subagents/SubAgentStore.js"
import { PairingStore } from "../../src/users/PairingStore.js"
import type { TurnEvent } from "../../src/turn/TurnEvent.js"
import { FakeReply, type FakeModelServerShape, makeWith as makeFakeServer } from "../support/fakeModelServer.js"
import { offeredTools, toolResultsById } from "../support/modelRequests.js"
import { agentDatabaseConfig, agentSql, databases } from "../support/databases.js"
import { pairTelegramUsers } from "../support/pairedUsers.js"
import { writeFiles } from "../support/tempDir.js"
import { testAgentDir } from "../support/testAgentDir.js"

// Sub-agents (spawn): a turn of the agent in a conversation of its own, under its parent turn's terms, whose answer
// comes back to the parent's conversation exactly once. The fake model answers each request by what it carries.

const hold = { command: "kern test", waitSeconds: 10 }
const provided = <A, E>(layer: Layer.Layer<A, E, ProcessEnv | Layer.Layer.Success<typeof NodeContext.layer>>) =>
  layer.pipe(Layer.provide(Layer.succeed(ProcessEnv, { OPENROUTER_API_KEY: "sk-test" })), Layer.provide(NodeContext.layer))

interface ChatMessage {
  readonly role: string
  readonly content: unknown
  readonly tool_calls?: ReadonlyArray<unknown>
}
const messagesOf = (body: Record<string, unknown>) => (body.messages ?? []) as ReadonlyArray<ChatMessage>
const textOf = (message: ChatMessage) => typeof message.content === "string" ? message.content : JSON.stringify(message.content)
const userTexts = (body: Record<string, unknown>) => messagesOf(body).filter((m) => m.role === "user").map(textOf)
/** A sub-agent's request: its first message is its task. */
const isSubagent = (body: Record<string, unknown>) => userTexts(body).some((text) => text.includes("You are a sub-agent"))
/** How many answers the model gave since the last user message (the turn's step, from 0). */
const stepOf = (body: Record<string, unknown>) => {
  const messages = messagesOf(body)
  const lastUser = messages.map((m) => m.role).lastIndexOf("user")
  return messages.slice(lastUser + 1).filter((m) => m.role === "assistant").length
}
const lastIsReport = (body: Record<string, unknown>) => (userTexts(body).at(-1) ?? "").includes("[sub-agent ")

const folderOf = (server: FakeModelServerShape, config: Record<string, unknown> = {}) =>
  testAgentDir({ baseURL: server.baseURL, ...config }, {
    "notes.txt": "hello"
  })

class Seen extends Context.Tag("test/Seen")<Seen, Queue.Dequeue<TurnEvent>>() {}
const seenLayer = Layer.scoped(Seen, Effect.flatMap(AgentRuntime, (runtime) => PubSub.subscribe(runtime.events)))

const start = (dir: string) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    // Closed by stop, or with the test's scope when the test fails before it (no agent left waiting on an approval).
    yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
    const context = yield* Layer.buildWithScope(provided(Layers.runningAgentLayerWith(dir, hold, seenLayer)), scope)
    return {
      runtime: Context.get(context, AgentRuntime),
      seen: Context.get(context, Seen),
      store: Context.get(context, SubAgentStore),
      approvals: Context.get(context, Approvals),
      stop: Scope.close(scope, Exit.void)
    }
  })

/** Every event until `done` says so, or a bound for a stuck test. */
const eventsUntil = (seen: Queue.Dequeue<TurnEvent>, done: (events: ReadonlyArray<TurnEvent>) => boolean) =>
  Effect.gen(function*() {
    const events: Array<TurnEvent> = []
    while (!done(events)) events.push(yield* Queue.take(seen))
    return events
  }).pipe(Effect.timeoutFail({ duration: "90 seconds", onTimeout: () => new Error("the awaited events never came") }))

const reports = (events: ReadonlyArray<TurnEvent>) =>
  events.filter((event) => event.type === "incoming" && event.interface !== "subagent" && event.text.startsWith("[sub-agent "))

/** Finish events of the parent's turns that answered a report: the report's turn has run. */
const reportAnswered = (events: ReadonlyArray<TurnEvent>) =>
  events.some((event) => event.type === "finish" && event.reply === "noted")

const Events = Schema.Array(Schema.Struct({ toolId: Schema.String, status: Schema.String, errorMessage: Schema.NullOr(Schema.String) }))
const refusals = (dir: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT tool_id, status, error_message FROM kernel_events WHERE status = 'denied' ORDER BY event_id`).pipe(
    Effect.flatMap(Schema.decodeUnknown(Events)),
    Effect.provide(agentSql(dir)),
    Effect.orDie
  )

describe.each(databases)("sub-agents on $dialect", (database) => {
  const agentDir = (server: FakeModelServerShape, config: Record<string, unknown> = {}) =>
    Effect.map(agentDatabaseConfig(database), (db) => folderOf(server, { ...config, ...db }))

  it.scopedLive("a sub-agent works with the tools it was given; a tool beyond them is refused and audited; its answer reaches the parent once", () =>
    Effect.gen(function*() {
      const server = yield* makeFakeServer({
        fallback: (body) => {
          if (isSubagent(body)) {
            // It calls bash by name though only read was given, then reads, then answers.
            return stepOf(body) === 0
              ? FakeReply.toolCalls([
                { id: "s1", name: "bash", args: { command: "echo escaped > escaped.txt" } },
                { id: "s2", name: "read", args: { path: "notes.txt" } }
              ])
              : FakeReply.text("the notes say hello")
          }
          if (lastIsReport(body)) return FakeReply.text("noted")
          return stepOf(body) === 0
            ? FakeReply.toolCalls([{ id: "p1", name: "spawn", args: { task: "read notes.txt and say what it says", tools: ["read"] } }])
            : FakeReply.text("started it")
        }
      })
      const dir = yield* agentDir(server)
      const agent = yield* start(dir)
      yield* agent.runtime.submit({ interface: "cli", channel: "terminal", userId: "operator", text: "delegate the notes" })
      const events = yield* eventsUntil(agent.seen, reportAnswered)

      const reported = reports(events)
      expect(reported.length).toBe(1)
      expect(reported[0]).toMatchObject({ text: "[sub-agent 1 finished: read notes.txt and say what it says] the notes say hello" })
      // The sub-agent was offered read alone (no spawn below maxDepth 1) and bash's call was refused, nothing run.
      const requests = yield* server.modelRequests
      const sub = requests.filter((request) => isSubagent(request.body as Record<string, unknown>))
      expect(offeredTools(sub[0]!.body)).toEqual(["read"])
      const results = toolResultsById(sub[1]!.body)
      expect(results.s1).toContain("not among the tools this sub-agent was given")
      expect(results.s2).toContain("hello")
      const row = yield* agent.store.get(1).pipe(Effect.orDie)
      expect(row).toMatchObject({ _tag: "Some", value: { state: "done", depth: 1, tools: ["read"] } })
      yield* agent.stop
      expect(yield* refusals(dir)).toEqual([
        { toolId: "bash", status: "denied", errorMessage: expect.stringContaining("not among the tools this sub-agent was given") }
      ])
      // Its own conversation's session, beside the operator's.
      const sessions = NodeFs.readdirSync(NodePath.join(dir, ".kern", "sessions"))
      expect(sessions.some((name) => name.endsWith("_subagent-1.jsonl"))).toBe(true)

      // A restart reports nothing again.
      const again = yield* start(dir)
      expect((yield* again.store.running.pipe(Effect.orDie)).length).toBe(0)
      yield* again.stop
    }), 180_000)

  it.scopedLive("a paired read-scope user's sub-agent has that user's scope, never the operator's", () =>
    Effect.gen(function*() {
      const server = yield* makeFakeServer({
        fallback: (body) => {
          if (isSubagent(body)) {
            return stepOf(body) === 0
              ? FakeReply.toolCalls([{ id: "w1", name: "write", args: { path: "shared/x.txt", content: "x" } }])
              : FakeReply.text("could not write")
          }
          if (lastIsReport(body)) return FakeReply.text("noted")
          // The user's turn asks for write and bash, which it does not have: refused; then with no tools named.
          const step = stepOf(body)
          return step === 0
            ? FakeReply.toolCalls([{ id: "p1", name: "spawn", args: { task: "write x", tools: ["write", "bash"] } }])
            : step === 1
            ? FakeReply.toolCalls([{ id: "p2", name: "spawn", args: { task: "write x" } }])
            : FakeReply.text("started it")
        }
      })
      const dir = yield* agentDir(server)
      yield* Effect.promise(() => pairTelegramUsers(dir, [{ userId: "42", displayName: "Ada" }], agentSql(dir)))
      const agent = yield* start(dir)
      yield* agent.runtime.submit({ interface: "telegram", channel: "42", userId: "42", text: "please write x" })
      const events = yield* eventsUntil(agent.seen, reportAnswered)

      const requests = yield* server.modelRequests
      const parent = requests.filter((request) => !isSubagent(request.body as Record<string, unknown>))
      expect(toolResultsById(parent[1]!.body).p1).toContain("a sub-agent gets no tool this turn does not have: write, bash")
      const sub = requests.filter((request) => isSubagent(request.body as Record<string, unknown>))
      const subTools = offeredTools(sub[0]!.body)
      expect(subTools).not.toContain("write")
      expect(subTools).not.toContain("bash")
      expect(toolResultsById(sub[1]!.body).w1).toContain("needs tool scope write; user 42 has tool scope read")
      const row = yield* agent.store.get(1).pipe(Effect.orDie)
      expect(row).toMatchObject({ _tag: "Some", value: { toolScope: "read", approver: { interface: "telegram", userId: "42" } } })
      // The report goes to the user's own conversation.
      expect(reports(events)).toEqual([
        expect.objectContaining({ interface: "telegram", channel: "42", text: "[sub-agent 1 finished: write x] could not write" })
      ])
      yield* agent.stop
    }), 180_000)

  it.scopedLive("depth and concurrency limits, cancel, and a sub-agent that runs out of budget says so to its parent", () =>
    Effect.gen(function*() {
      const server = yield* makeFakeServer({
        fallback: (body) => {
          const task = userTexts(body).find((text) => text.includes("You are a sub-agent")) ?? ""
          if (task.includes("wait forever")) return FakeReply.text("too late", { delay: "10 minutes" })
          if (task.includes("go deeper")) {
            return stepOf(body) === 0
              ? FakeReply.toolCalls([{ id: "d1", name: "spawn", args: { task: "deeper still" } }])
              : FakeReply.text("could not go deeper")
          }
          if (task.includes("read twice")) {
            return FakeReply.toolCalls([
              { id: "r1", name: "read", args: { path: "notes.txt" } },
              { id: "r2", name: "read", args: { path: "notes.txt" } }
            ])
          }
          if (lastIsReport(body)) return FakeReply.text("noted")
          const last = userTexts(body).at(-1) ?? ""
          const step = stepOf(body)
          if (last.includes("limits")) {
            return step === 0
              ? FakeReply.toolCalls([
                { id: "c1", name: "spawn", args: { task: "wait forever" } },
                { id: "c2", name: "spawn", args: { task: "wait forever too" } }
              ])
              : step === 1
              ? FakeReply.toolCalls([{ id: "c3", name: "spawn", args: { action: "cancel", id: 1 } }])
              : FakeReply.text("cancelled it")
          }
          if (last.includes("deep")) {
            return step === 0
              ? FakeReply.toolCalls([{ id: "g1", name: "spawn", args: { task: "go deeper" } }])
              : FakeReply.text("started it")
          }
          return step === 0
            ? FakeReply.toolCalls([{ id: "b1", name: "spawn", args: { task: "read twice", budget: { maxToolCalls: 1 } } }])
            : FakeReply.text("started it")
        }
      })
      const dir = yield* agentDir(server, { subagents: { maxConcurrent: 1, maxDepth: 1 } })
      const agent = yield* start(dir)

      // Concurrency 1: the second spawn of the step is refused; the first is cancelled and reports nothing.
      yield* agent.runtime.submit({ interface: "cli", channel: "terminal", userId: "operator", text: "limits" })
      const first = yield* eventsUntil(agent.seen, (events) => events.some((event) => event.type === "finish" && event.reply === "cancelled it"))
      const results = first.filter((event) => event.type === "tool-result")
      const byId = Object.fromEntries(results.map((event) => [event.type === "tool-result" ? event.id : "", event]))
      expect(byId.c1).toMatchObject({ isError: false })
      expect(byId.c2).toMatchObject({ isError: true, text: expect.stringContaining("subagents.maxConcurrent is 1") })
      expect(byId.c3).toMatchObject({ isError: false, text: expect.stringContaining("cancelled") })
      expect(yield* agent.store.get(1).pipe(Effect.orDie)).toMatchObject({ _tag: "Some", value: { state: "cancelled" } })

      // Depth 1: the sub-agent is not offered spawn, and calling it by name is refused.
      yield* agent.runtime.submit({ interface: "cli", channel: "terminal", userId: "operator", text: "deep" })
      const deep = yield* eventsUntil(agent.seen, (events) => events.filter((event) => event.type === "finish" && event.reply === "noted").length >= 1)
      const deepReport = reports(deep)
      expect(deepReport).toEqual([expect.objectContaining({ text: "[sub-agent 2 finished: go deeper] could not go deeper" })])
      const deeper = deep.find((event) => event.type === "tool-result" && event.id === "d1")
      expect(deeper).toMatchObject({ isError: true, text: expect.stringContaining("cannot start another: subagents.maxDepth is 1") })

      // A budget of one tool call: the second read is refused, and the next step stops the sub-agent; the parent is told.
      yield* agent.runtime.submit({ interface: "cli", channel: "terminal", userId: "operator", text: "budget" })
      const spent = yield* eventsUntil(agent.seen, (events) => events.some((event) => event.type === "finish" && event.reply === "noted"))
      const budgetReport = reports(spent)
      expect(budgetReport.length).toBe(1)
      expect(budgetReport[0]).toMatchObject({ text: expect.stringMatching(/^\[sub-agent 3 stopped: read twice\] the turn's budget is used up \(maxToolCalls 1 reached/) })
      expect(yield* agent.store.get(3).pipe(Effect.orDie)).toMatchObject({ _tag: "Some", value: { state: "failed" } })

      // Over the whole run, the cancelled sub-agent never reported.
      const all = [...first, ...deep, ...spent]
      expect(reports(all).filter((event) => event.type === "incoming" && event.text.startsWith("[sub-agent 1 "))).toEqual([])
      expect(offeredTools((yield* server.modelRequests).find((request) => userTexts(request.body as Record<string, unknown>).some((t) => t.includes("go deeper")))!.body)).not.toContain("spawn")
      yield* agent.stop
    }), 240_000)

  it.scopedLive("an approval a paired user's sub-agent needs is asked of that user's chat, not another's; approved, the call runs", () =>
    Effect.gen(function*() {
      const server = yield* makeFakeServer({
        fallback: (body) => {
          if (isSubagent(body)) {
            return stepOf(body) === 0
              ? FakeReply.toolCalls([{ id: "x1", name: "bash", args: { command: "rm scratch.txt && echo removed" } }])
              : FakeReply.text("removed the scratch file")
          }
          if (lastIsReport(body)) return FakeReply.text("noted")
          return stepOf(body) === 0
            ? FakeReply.toolCalls([{ id: "p1", name: "spawn", args: { task: "remove scratch.txt", tools: ["bash"] } }])
            : FakeReply.text("started it")
        }
      })
      const dir = yield* agentDir(server, { approvalMode: "ask", approvalTimeout: 60 })
      writeFiles(dir, { "shared/scratch.txt": "scratch" })
      // Two paired users; Ada (42) has the full scope her sub-agent's bash needs, Bob (7) is there to be left alone.
      yield* Effect.promise(() => pairTelegramUsers(dir, [{ userId: "42", displayName: "Ada" }, { userId: "7", displayName: "Bob" }], agentSql(dir)))
      yield* Effect.flatMap(PairingStore, (store) => store.setScope("telegram:42", "full")).pipe(
        Effect.provide(PairingStore.Default.pipe(Layer.provide(agentSql(dir)))),
        Effect.orDie
      )
      const agent = yield* start(dir)
      const asked = yield* PubSub.subscribe(agent.approvals.requests)
      yield* agent.runtime.submit({ interface: "telegram", channel: "42", userId: "42", text: "please remove the scratch file" })

      // The sub-agent's bash waits for a person: Ada's chat (its origin: Telegram sends the prompt to origin.channel,
      // approvalPrompts.ts), not Bob's, not the terminal.
      const pending = yield* Queue.take(asked).pipe(Effect.timeoutFail({ duration: "60 seconds", onTimeout: () => new Error("no approval asked") }))
      expect(pending).toMatchObject({ toolId: "bash", args: { command: "rm scratch.txt && echo removed" } })
      expect({ ...pending.origin }).toEqual({ interface: "telegram", channel: "42", userId: "42" })
      expect(NodeFs.existsSync(NodePath.join(dir, "shared", "scratch.txt"))).toBe(true)
      // Bob, a paired user but no operator, cannot answer it.
      const byBob = yield* Effect.flip(agent.approvals.decide(pending.id, true, channelUser("telegram", "7")))
      expect(byBob).toMatchObject({ reason: "not_operator" })
      yield* agent.approvals.decide(pending.id, true, localOperator("test"))

      const events = yield* eventsUntil(agent.seen, reportAnswered)
      expect(reports(events)).toEqual([
        expect.objectContaining({ interface: "telegram", channel: "42", text: "[sub-agent 1 finished: remove scratch.txt] removed the scratch file" })
      ])
      expect(NodeFs.existsSync(NodePath.join(dir, "shared", "scratch.txt"))).toBe(false)
      const sub = (yield* server.modelRequests).filter((request) => isSubagent(request.body as Record<string, unknown>))
      expect(toolResultsById(sub[1]!.body).x1).toContain("removed")
      // Nothing else was asked of anyone.
      expect(yield* Queue.size(asked)).toBe(0)
      yield* agent.stop
    }), 180_000)

  it.scopedLive("nesting to depth 2 (maxDepth 2): the inner sub-agent reports to the outer, the outer to the parent", () =>
    Effect.gen(function*() {
      const taskOf = (body: Record<string, unknown>) => userTexts(body).find((text) => text.includes("You are a sub-agent")) ?? ""
      const server = yield* makeFakeServer({
        fallback: (body) => {
          const task = taskOf(body)
          if (task.includes("count the notes")) return FakeReply.text("there is 1 note")
          if (task.includes("survey the folder")) {
            if (lastIsReport(body)) return FakeReply.text("my helper says: there is 1 note")
            return stepOf(body) === 0
              ? FakeReply.toolCalls([{ id: "o1", name: "spawn", args: { task: "count the notes" } }])
              : FakeReply.text("asked a helper")
          }
          if (lastIsReport(body)) return FakeReply.text("noted")
          return stepOf(body) === 0
            ? FakeReply.toolCalls([{ id: "p1", name: "spawn", args: { task: "survey the folder" } }])
            : FakeReply.text("started it")
        }
      })
      const dir = yield* agentDir(server, { subagents: { maxDepth: 2 } })
      const agent = yield* start(dir)
      yield* agent.runtime.submit({ interface: "cli", channel: "terminal", userId: "operator", text: "survey" })
      const events = yield* eventsUntil(agent.seen, reportAnswered)

      // The inner's answer came to the outer's conversation; the parent's heard only the outer, once, after it.
      const incoming = events.filter((event) => event.type === "incoming" && event.text.startsWith("[sub-agent "))
      expect(incoming).toEqual([
        expect.objectContaining({ interface: "subagent", channel: "1", text: "[sub-agent 2 finished: count the notes] there is 1 note" }),
        expect.objectContaining({ interface: "cli", text: "[sub-agent 1 finished: survey the folder] my helper says: there is 1 note" })
      ])
      expect(yield* agent.store.get(1).pipe(Effect.orDie)).toMatchObject({ _tag: "Some", value: { state: "done", depth: 1 } })
      expect(yield* agent.store.get(2).pipe(Effect.orDie)).toMatchObject({
        _tag: "Some",
        value: { state: "done", depth: 2, parentInterface: "subagent", parentChannel: "1" }
      })
      // The outer (depth 1) was offered spawn; the inner (depth 2 = maxDepth) was not.
      const requests = yield* server.modelRequests
      const firstOf = (text: string) => requests.find((request) => taskOf(request.body as Record<string, unknown>).includes(text))!.body
      expect(offeredTools(firstOf("survey the folder"))).toContain("spawn")
      expect(offeredTools(firstOf("count the notes"))).not.toContain("spawn")
      yield* agent.stop
    }), 180_000)
})
