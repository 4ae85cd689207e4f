import { Effect, Layer, Option, PubSub, Queue, Ref } from "effect"
import { AgentConfig } from "../config/AgentConfig.js"
import { confinedAudience, operatorUserId, seesEverything, subagentInterface } from "../kernel/Audience.js"
import { modelToolName } from "../kernel/aiTools.js"
import type { RunContextData } from "../kernel/RunContext.js"
import { toolFailure } from "../kernel/ToolFailure.js"
import { conversationOfChat } from "../session/conversationIds.js"
import { Followups, originOf, type WorkOrigin } from "../tools/Followups.js"
import { type SpawnRequest, SubAgents } from "../tools/subagents/SubAgents.js"
import { type SubAgent, type SubAgentState, SubAgentStore } from "../tools/subagents/SubAgentStore.js"
import type { TurnEvent } from "../turn/TurnEvent.js"
import { TurnStops } from "../turn/TurnStops.js"
import { AgentRuntime } from "./AgentRuntime.js"
import { Inbox } from "./Inbox.js"
import { reportOf, taskText } from "./subagentReports.js"

/** The key of a sub-agent's one report to its parent, and of its task message. */
const doneKey = (id: number) => `subagent:${id}:done`
const taskKey = (id: number) => `subagent:${id}:task`

/** The events of a sub-agent's turns carry `subagent:<id>` as their conversation id. */
const eventPrefix = `${subagentInterface}:`

/** Whom a sub-agent reports to: the conversation of the turn that spawned it. */
const parentOf = (row: SubAgent): WorkOrigin => ({ interface: row.parentInterface, channel: row.parentChannel, userId: row.parentUserId })

/** What the watcher has seen of a running sub-agent turn so far. */
interface Seen {
  readonly toolCalls: number
  readonly failure?: string | undefined
}

/**
 * Sub-agents in the running agent. A sub-agent is a row in kern.db (SubAgentStore) and a conversation of its own
 * (`subagent-<id>`): spawn stores its terms and posts its task there (Followups, exactly once); its turns run in the
 * turn loop like any other, under its terms (TurnRunner reads them). One fiber follows the agent's turn events: when a
 * sub-agent's turn finishes (with none of its own sub-agents still running), its answer is posted to its parent's
 * conversation under the key `subagent:<id>:done` and its row ended. At start, a sub-agent left running by an earlier
 * process is reported as interrupted, unless its report was posted already or its task is still waiting in the inbox.
 */
export const layer = Layer.scoped(
  SubAgents,
  Effect.gen(function*() {
    const { config } = yield* AgentConfig
    const store = yield* SubAgentStore
    const followups = yield* Followups
    const stops = yield* TurnStops
    const runtime = yield* AgentRuntime
    const inbox = yield* Inbox
    // Spawn's count-then-create and every end of a sub-agent, one at a time: a sub-agent ends, and reports, once.
    const one = yield* Effect.makeSemaphore(1)
    const unexpected = (error: { readonly message: string }) => toolFailure("UNEXPECTED", error.message)

    /** Posts the sub-agent's report, then ends its row: a crash between the two leaves the report posted (see start). */
    const finish = (row: SubAgent, state: Exclude<SubAgentState, "running">, text: string) =>
      Effect.gen(function*() {
        yield* followups.post(doneKey(row.id), parentOf(row), text)
        yield* store.end(row.id, state, text)
      })

    // A sub-agent left running by an earlier process, before any turn runs here.
    const pending = yield* inbox.pending
    for (const row of yield* store.running) {
      if (yield* followups.posted(doneKey(row.id))) {
        yield* store.end(row.id, "done", "its report reached its parent before the agent restarted")
        continue
      }
      const waiting = pending.some((entry) => entry.interface === subagentInterface && entry.channel === String(row.id))
      if (waiting) continue
      yield* finish(row, "interrupted", reportOf(row, { _tag: "interrupted" }))
    }

    const seen = yield* Ref.make<ReadonlyMap<string, Seen>>(new Map())
    const note = (turnId: string, change: (was: Seen) => Seen) =>
      Ref.update(seen, (map) => new Map([...map, [turnId, change(map.get(turnId) ?? { toolCalls: 0 })]]))

    /** Per sub-agent, how many of its children's reports its turns have taken (their `incoming` events). */
    const reportsAnswered = yield* Ref.make<ReadonlyMap<number, number>>(new Map())
    const answeredReport = (event: Extract<TurnEvent, { readonly type: "incoming" }>) => {
      if (event.interface !== subagentInterface || !event.text.startsWith("[sub-agent ")) return Effect.void
      const id = Number(event.conversationId.slice(eventPrefix.length))
      return Ref.update(reportsAnswered, (map) => new Map([...map, [id, (map.get(id) ?? 0) + 1]]))
    }

    const finished = (event: Extract<TurnEvent, { readonly type: "finish" }>) =>
      Effect.gen(function*() {
        const id = Number(event.conversationId.slice(eventPrefix.length))
        const was = (yield* Ref.get(seen)).get(event.turnId) ?? { toolCalls: 0 }
        yield* Ref.update(seen, (map) => {
          const next = new Map(map)
          next.delete(event.turnId)
          return next
        })
        yield* one.withPermits(1)(Effect.gen(function*() {
          const found = yield* store.get(id)
          if (Option.isNone(found) || found.value.state !== "running") return
          const row = found.value
          yield* store.addUsage(id, { toolCalls: was.toolCalls, promptTokens: event.usage.inputTokens, costUsdCents: event.usage.costUsdCents })
          if (was.failure !== undefined) {
            return yield* finish(row, "failed", reportOf(row, { _tag: "failed", reason: was.failure, reply: event.reply }))
          }
          // Its own sub-agents report into its conversation: it answers once they have.
          if ((yield* store.runningChildren(id)) > 0) return
          // A child that ended before this turn did has its report waiting in this conversation, not yet answered by
          // a turn: the turn that answers it reports, not this one (else the child's result would never reach the
          // parent). Counted from the turns' own events, which this fiber reads in order: a later turn that already
          // took the report (its `incoming` comes after this `finish`) is not counted yet.
          const answered = (yield* Ref.get(reportsAnswered)).get(id) ?? 0
          if ((yield* store.reportedChildren(id)) > answered) return
          yield* finish(row, "done", reportOf(row, { _tag: "done", reply: event.delivered ? event.reply : "" }))
        }))
      })

    const follow = (event: TurnEvent) =>
      !event.conversationId.startsWith(eventPrefix)
        ? Effect.void
        : event.type === "tool-call"
        ? note(event.turnId, (was) => ({ ...was, toolCalls: was.toolCalls + 1 }))
        : event.type === "error"
        ? note(event.turnId, (was) => ({ ...was, failure: event.message }))
        : event.type === "incoming"
        ? answeredReport(event)
        : event.type === "finish"
        ? finished(event)
        : Effect.void

    const events = yield* PubSub.subscribe(runtime.events)
    // One fiber for every sub-agent: it logs what it cannot do and goes on.
    yield* Effect.forkScoped(Effect.forever(Effect.flatMap(Queue.take(events), (event) =>
      follow(event).pipe(Effect.catchAll((error) => Effect.logWarning(`kern: sub-agents: ${error.message}`))))))

    /** Whether the run may see a sub-agent: the operator's sees all, any other conversation its own's only. */
    const visible = (ctx: RunContextData, row: SubAgent) =>
      seesEverything(ctx) || row.audience?.conversationId === confinedAudience(ctx)?.conversationId

    const visibleRow = (ctx: RunContextData, id: number) =>
      Effect.flatMap(store.get(id).pipe(Effect.mapError(unexpected)), (found) =>
        Option.isSome(found) && visible(ctx, found.value)
          ? Effect.succeed(found.value)
          : Effect.fail(toolFailure("NOT_FOUND", `no sub-agent ${id} here (spawn { action: "list" } lists them)`)))

    /** The tool ids the sub-agent gets: those asked for (by id or name), all of them offered to the parent turn. */
    const toolsFor = (ctx: RunContextData, asked: ReadonlyArray<string> | undefined) =>
      Effect.gen(function*() {
        const offered = ctx.offered
        if (offered === undefined) return yield* toolFailure("PERMISSION_DENIED", "spawn works only in one of the agent's turns")
        if (asked === undefined) return [...offered]
        const byName = new Map([...offered].flatMap((id) => [[id, id], [modelToolName(id), id]] as const))
        const missing = asked.filter((name) => !byName.has(name))
        if (missing.length > 0) {
          return yield* toolFailure(
            "PERMISSION_DENIED",
            `a sub-agent gets no tool this turn does not have: ${missing.join(", ")} ` +
              `(this turn has ${[...offered].map(modelToolName).join(", ") || "no tools"}); nothing was started`
          )
        }
        return [...new Set(asked.map((name) => byName.get(name)!))]
      })

    const spawn = (ctx: RunContextData, request: SpawnRequest) =>
      Effect.gen(function*() {
        const { maxConcurrent, maxDepth } = config.subagents
        const depth = (ctx.delegation?.depth ?? 0) + 1
        if (depth > maxDepth) {
          return yield* toolFailure(
            "PERMISSION_DENIED",
            maxDepth === 0
              ? "sub-agents are off (subagents.maxDepth is 0)"
              : `a sub-agent ${depth - 1} deep cannot start another: subagents.maxDepth is ${maxDepth}`
          )
        }
        const tools = yield* toolsFor(ctx, request.tools)
        return yield* one.withPermits(1)(Effect.gen(function*() {
          const running = (yield* store.running.pipe(Effect.mapError(unexpected))).length
          if (running >= maxConcurrent) {
            return yield* toolFailure(
              "PERMISSION_DENIED",
              `${running} sub-agents are running (subagents.maxConcurrent is ${maxConcurrent}): wait for one to finish, or cancel one`
            )
          }
          const carved = yield* ctx.budget.carve(request.budget ?? {})
          if (carved.maxPromptTokens === 0 || carved.maxToolCalls === 0) {
            return yield* toolFailure("BUDGET_EXCEEDED", "this turn's budget has too little left to give a sub-agent; nothing was started")
          }
          const parent = ctx.delegation === undefined
            ? originOf(ctx)
            : { interface: subagentInterface, channel: String(ctx.delegation.id), userId: ctx.userSid }
          const row = yield* store.create({
            task: request.task,
            parentInterface: parent.interface,
            parentChannel: parent.channel,
            parentUserId: parent.userId,
            parentSessionId: ctx.sessionId,
            approver: ctx.origin ?? originOf(ctx),
            depth,
            tools,
            toolScope: ctx.toolScope ?? null,
            audience: ctx.audience ?? null,
            budget: { ...carved, maxLatencyMs: ctx.budget.limits.maxLatencyMs }
          }).pipe(Effect.mapError(unexpected))
          const userId = ctx.userSid === "" ? operatorUserId : ctx.userSid
          yield* followups.post(taskKey(row.id), { interface: subagentInterface, channel: String(row.id), userId }, taskText(request.task)).pipe(
            Effect.tapError((error) =>
              store.end(row.id, "failed", `its task could not be posted: ${error.message}`).pipe(
                Effect.catchAll((ended) => Effect.logWarning(`kern: sub-agent ${row.id}: ${ended.message}`))
              )),
            Effect.mapError(unexpected)
          )
          return row
        }))
      }).pipe(Effect.withSpan("kern.subagents.spawn"))

    const cancel = (ctx: RunContextData, id: number) =>
      Effect.gen(function*() {
        const row = yield* visibleRow(ctx, id)
        if (row.state !== "running") return row
        const ended = yield* one.withPermits(1)(store.end(id, "cancelled", "cancelled by its parent")).pipe(Effect.mapError(unexpected))
        if (ended) yield* stops.stopWhere((turn) => turn.conversation === conversationOfChat(subagentInterface, String(id)), "its parent (cancel)")
        return yield* visibleRow(ctx, id)
      }).pipe(Effect.withSpan("kern.subagents.cancel", { attributes: { id } }))

    return SubAgents.of({
      spawn,
      status: visibleRow,
      list: (ctx) =>
        store.recent(50).pipe(Effect.map((rows) => rows.filter((row) => visible(ctx, row))), Effect.mapError(unexpected)),
      cancel
    })
  })
)
