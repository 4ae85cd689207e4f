import { FileSystem } from "@effect/platform"
import { Clock, Effect, Exit, Option, PubSub, Ref, SynchronizedRef } from "effect"
import { AgentConfig } from "../config/AgentConfig.js"
import { knowledgeReport, needsCare } from "../memory/knowledge.js"
import { today } from "../memory/notes.js"
import { agentZone } from "../session/envelope.js"
import { makeSkippedFiles } from "../storage/agentFiles.js"
import { heartbeatInterface, MessageQueue } from "../turn/MessageQueue.js"
import type { TurnOutcome } from "../turn/turnTally.js"
import { heartbeatPrompt, withinActiveHours } from "./heartbeat.js"
import { HeartbeatLog } from "./HeartbeatLog.js"

/** What a heartbeat tick did (sent a heartbeat turn, or skipped), and how a heartbeat turn ended. */
export interface HeartbeatNotice {
  readonly outcome: "sent" | "skipped" | "ran" | "failed"
  readonly reason: string
  readonly turnId?: string | undefined
}

/**
 * When the first heartbeat tick is due for a Scheduler starting at `nowMs`, from the due time the last one kept in
 * kern.db (HeartbeatLog.due): that one stays due across a restart (one missed while the agent was down fires once,
 * now); none, or one further off than an interval (the interval was shortened in config), is due an interval from now.
 * A host reads it too, to wake a passive agent when its heartbeat is due.
 */
export const firstHeartbeatDue = (stored: Option.Option<number>, nowMs: number, intervalMs: number): number =>
  Option.match(stored, {
    onNone: () => nowMs + intervalMs,
    onSome: (due) => due <= nowMs + intervalMs ? due : nowMs + intervalMs
  })

/**
 * The running agent's heartbeat: a `[heartbeat]` message in the queue every heartbeatInterval minutes, unless there is
 * no reason for one; what each tick did is recorded in kern.db (HeartbeatLog) and published to the channels. The
 * Scheduler fires it (a schedule like any other, `kern schedule list` shows it); the runtime tells it when a message
 * arrives and when a heartbeat's turn ends.
 */
export class HeartbeatSchedule extends Effect.Service<HeartbeatSchedule>()("kern/runtime/HeartbeatSchedule", {
  dependencies: [HeartbeatLog.Default],
  effect: Effect.gen(function*() {
    const { config, paths } = yield* AgentConfig
    const heartbeatLog = yield* HeartbeatLog
    const fs = yield* FileSystem.FileSystem
    const queue = yield* MessageQueue
    const notices = yield* PubSub.unbounded<HeartbeatNotice>()
    const zone = agentZone(config.timezone)
    /** When the heartbeat that is queued or running was sent: the next tick is skipped rather than piled up. */
    const heartbeatSentAt = yield* Ref.make<number | undefined>(undefined)
    /**
     * A message arrived since the last heartbeat was sent. Kept in kern.db as well, so a runtime that starts (an agent
     * a host woke because its heartbeat was due) skips the model call when the last heartbeat already saw everything.
     */
    const activity = yield* SynchronizedRef.make(yield* heartbeatLog.pendingActivity)
    // A knowledge file the door refuses is reported once, not at every heartbeat.
    const skippedKnowledge = yield* makeSkippedFiles()

    /**
     * A message arrives: the next heartbeat has something to save. Written to kern.db when it changes (once per
     * heartbeat interval at most), before the message is accepted: nothing accepted is ever missing from it.
     */
    const messageArrived = SynchronizedRef.updateEffect(activity, (before) => before ? Effect.succeed(true) : Effect.as(heartbeatLog.setPendingActivity(true), true))

    /** Bookkeeping when a heartbeat's turn ends: free for the next one, and what it did. */
    const turnEnded = (turnId: string, outcome: Exit.Exit<TurnOutcome>) =>
      Effect.gen(function*() {
        const now = (yield* Ref.getAndSet(heartbeatSentAt, undefined)) ?? (yield* Clock.currentTimeMillis)
        if (Exit.isSuccess(outcome) && outcome.value.failure === undefined) {
          const reason = outcome.value.delivered ? "the agent sent a message" : "nothing to report"
          yield* heartbeatLog.record(now, "ran", reason)
          yield* PubSub.publish(notices, { outcome: "ran", reason, turnId })
        } else {
          const reason = Exit.isSuccess(outcome) ? outcome.value.failure?.message ?? "" : "the turn failed"
          yield* heartbeatLog.record(now, "failed", reason)
          yield* PubSub.publish(notices, { outcome: "failed", reason, turnId })
        }
      })

    /**
     * One heartbeat tick: skipped outside activeHours, while the last heartbeat is queued or running (they never pile
     * up), and when nothing happened since the last one (no message, knowledge in order): no model call then.
     * Otherwise the `[heartbeat]` message goes in the queue, naming the knowledge that needs care.
     */
    const skipped = (nowMs: number, reason: string) =>
      Effect.all([
        Effect.logDebug(`heartbeat skipped: ${reason}`),
        heartbeatLog.record(nowMs, "skipped", reason),
        PubSub.publish(notices, { outcome: "skipped", reason })
      ], { discard: true })

    const tick = (nowMs: number) =>
      Effect.gen(function*() {
        if (!withinActiveHours(config.activeHours, nowMs, zone)) {
          return yield* skipped(nowMs, `outside activeHours (${config.activeHours})`)
        }
        if ((yield* Ref.get(heartbeatSentAt)) !== undefined) {
          return yield* skipped(nowMs, "the previous heartbeat is still queued or running")
        }
        const knowledge = yield* knowledgeReport(paths.dir, config.staleKnowledgeDays, skippedKnowledge).pipe(
          Effect.provideService(FileSystem.FileSystem, fs),
          Effect.catchAll((error) =>
            Effect.as(Effect.logWarning(`kern: could not check knowledge/: ${error.message}`), { stale: [], unindexed: [] })
          )
        )
        if (!(yield* SynchronizedRef.get(activity)) && !needsCare(knowledge)) {
          return yield* skipped(nowMs, "nothing happened since the last heartbeat")
        }
        yield* Ref.set(heartbeatSentAt, nowMs)
        yield* SynchronizedRef.updateEffect(activity, () => Effect.as(heartbeatLog.setPendingActivity(false), false))
        // A heartbeat is not durable: a restart makes a new one when it is due.
        const queued = yield* queue.offer({
          interface: heartbeatInterface,
          channel: "heartbeat",
          userId: "system",
          text: heartbeatPrompt(yield* today(zone), knowledge)
        })
        yield* Effect.logInfo("heartbeat: a heartbeat turn is queued").pipe(Effect.annotateLogs({ turn: queued.turnId }))
        yield* PubSub.publish(notices, { outcome: "sent", reason: "a heartbeat turn is queued", turnId: queued.turnId })
      }).pipe(Effect.withSpan("kern.heartbeat.tick"))

    const intervalMs = config.heartbeatInterval * 60_000

    /** When the first tick is due as the Scheduler starts (none: heartbeatInterval 0, no heartbeat): firstHeartbeatDue. */
    const start = intervalMs === 0 ? Effect.succeed(Option.none<number>()) : Effect.gen(function*() {
      const next = firstHeartbeatDue(yield* heartbeatLog.due, yield* Clock.currentTimeMillis, intervalMs)
      yield* heartbeatLog.setNext(next)
      return Option.some(next)
    })

    /**
     * The Scheduler fires the heartbeat when it is due: one tick, and the next one due an interval after this one fired,
     * so a tick that comes late (a suspended machine, an agent that was down) fires once, not once per interval missed.
     * The due time is kept in kern.db (HeartbeatLog): a restart does not start the interval over.
     */
    const fire = (nowMs: number) =>
      Effect.gen(function*() {
        yield* tick(nowMs)
        const next = nowMs + intervalMs
        yield* heartbeatLog.setNext(next)
        return next
      })

    /** The Scheduler stops: no tick is due until a runtime runs again (the due time itself is kept). */
    const stopped = heartbeatLog.setNext(null)

    return { notices, messageArrived, turnEnded, intervalMs, start, fire, stopped } as const
  })
}) {}
