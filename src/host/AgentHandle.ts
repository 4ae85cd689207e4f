import { HttpServerRequest } from "@effect/platform"
import { Cause, Clock, Effect, Exit, identity, Option, Ref, Schema, Scope, SubscriptionRef, SynchronizedRef } from "effect"
import type { LiveAgent } from "./liveAgent.js"

/**
 * One hosted agent, from nothing running to running and back. Passive, it is its registry record and nothing else (no
 * fiber, timer, kern.db handle, lock or channel); a request or `wake` builds its running layers (waking) in a scope of
 * its own (live); `passivateIfIdle` closes that scope again once nothing has happened for idleSeconds and nothing is
 * going on (no request in flight, no turn running or queued, no message accepted and unanswered, no job or sub-agent).
 *
 * Every change of state goes through one SynchronizedRef, and a request counts itself in flight inside that same
 * step: a request that arrives while the agent wakes waits for it to be live, one that arrives while it passivates
 * waits for that to end and wakes it again. Nothing accepted is lost, and nothing is passivated under a request.
 */

export type AgentState = "passive" | "waking" | "live"

export class HostAgentError extends Schema.TaggedError<HostAgentError>()("HostAgentError", {
  name: Schema.String,
  reason: Schema.Literal("unknown", "unavailable", "removed"),
  message: Schema.String
}) {}

type Slot =
  | { readonly _tag: "Passive" }
  | { readonly _tag: "Live"; readonly live: LiveAgent }
  | { readonly _tag: "Removed" }

export interface AgentInfo {
  readonly name: string
  readonly dir: string
  readonly state: AgentState
  /** Why the last wake failed (the folder held by another `kern start`, a broken config), until one succeeds. */
  readonly problem?: string | undefined
}

export interface AgentHandleOptions {
  readonly name: string
  readonly dir: string
  /** Builds the running agent; its failure is the wake's problem. */
  readonly build: Effect.Effect<LiveAgent, { readonly message: string }>
  readonly idleMs: number
  /** Told of every change of state (the host's `changes`). */
  readonly changed: Effect.Effect<void>
}

const problemOf = (cause: Cause.Cause<{ readonly message: string }>): string =>
  Option.match(Cause.failureOption(cause), { onNone: () => "it failed unexpectedly (see the host's log)", onSome: (error) => error.message })

export const make = (options: AgentHandleOptions) =>
  Effect.gen(function*() {
    const slot = yield* SynchronizedRef.make<Slot>({ _tag: "Passive" })
    const info = yield* SubscriptionRef.make<AgentInfo>({ name: options.name, dir: options.dir, state: "passive" })
    const inFlight = yield* Ref.make(0)
    const lastActiveMs = yield* Ref.make(yield* Clock.currentTimeMillis)

    // Every line the agent logs, from its wake (the fibers its layers fork inherit this) to each request it serves,
    // names it: the host's log is one file for every agent, and `kern logs DIR` picks an agent's lines by this.
    const annotated = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.annotateLogs(effect, "agent", options.name)
    const setInfo = (f: (info: AgentInfo) => AgentInfo) => Effect.zipRight(SubscriptionRef.update(info, f), options.changed)
    const touch = Effect.flatMap(Clock.currentTimeMillis, (now) => Ref.set(lastActiveMs, now))
    const removed = new HostAgentError({ name: options.name, reason: "removed", message: `agent ${options.name} is no longer hosted` })

    const wakeNow = (reason: string) =>
      Effect.gen(function*() {
        yield* setInfo((i) => ({ ...i, state: "waking" }))
        yield* Effect.logInfo(`kern serve: waking ${options.name} (${reason})`)
        // Built interruptibly: a request wakes the agent inside its acquire step (serve: acquireUseRelease), which is
        // uninterruptible, and every fiber the agent's layers fork would inherit that; closing its scope then waits
        // forever on loops that cannot be interrupted (passivation and the host's stop hung so).
        const live = yield* Effect.interruptible(options.build).pipe(
          // Failed or interrupted (the request that woke it went away), it is passive again, nothing held.
          Effect.onExit((exit) =>
            Exit.isSuccess(exit)
              ? Effect.void
              : setInfo((i) => Exit.isInterrupted(exit) ? { ...i, state: "passive" } : { ...i, state: "passive", problem: problemOf(exit.cause) })
          ),
          Effect.mapError((error) => new HostAgentError({ name: options.name, reason: "unavailable", message: `agent ${options.name} could not start: ${error.message}` }))
        )
        yield* setInfo((i) => ({ name: i.name, dir: i.dir, state: "live" }))
        return live
      }).pipe(Effect.withSpan("kern.host.wake", { attributes: { agent: options.name, reason } }))

    /** The live agent, woken if need be; `count` marks a request in flight in the same step. */
    const acquire = (reason: string, count: boolean) =>
      SynchronizedRef.modifyEffect(slot, (current) => {
        const held = (live: LiveAgent) => Effect.as(Effect.zipRight(touch, count ? Ref.update(inFlight, (n) => n + 1) : Effect.void), live)
        switch (current._tag) {
          case "Removed":
            return Effect.fail(removed)
          case "Live":
            return Effect.map(held(current.live), (live) => [live, current] as const)
          case "Passive":
            return Effect.flatMap(wakeNow(reason), (live) => Effect.map(held(live), () => [live, { _tag: "Live", live }] as const))
        }
      })

    /** The request served by the agent's own app; the agent stays live while it is in flight (an event stream too). */
    const serve = (request: HttpServerRequest.HttpServerRequest) =>
      Effect.acquireUseRelease(
        acquire(`${request.method} ${request.url}`, true),
        (live) => (live.within ?? identity)(Effect.provideService(live.app, HttpServerRequest.HttpServerRequest, request)),
        () => Effect.zipRight(Ref.update(inFlight, (n) => n - 1), touch)
      ).pipe(Effect.scoped, annotated)

    const wake = (reason: string) => Effect.asVoid(acquire(reason, false)).pipe(annotated)

    const close = (live: LiveAgent) => Scope.close(live.scope, Exit.void)

    /**
     * Closes the agent's scope if it has been idle for idleMs with nothing going on. Activity found counts as activity
     * now, so the idle time runs from when the agent last had anything to do.
     */
    const passivateIfIdle = SynchronizedRef.modifyEffect(slot, (current) =>
      Effect.gen(function*() {
        if (current._tag !== "Live" || options.idleMs <= 0) return [false, current] as const
        if ((yield* Ref.get(inFlight)) > 0 || (yield* current.live.activity.busy)) {
          yield* touch
          return [false, current] as const
        }
        if ((yield* Clock.currentTimeMillis) - (yield* Ref.get(lastActiveMs)) < options.idleMs) return [false, current] as const
        yield* Effect.logInfo(`kern serve: passivating ${options.name} (idle)`)
        yield* close(current.live)
        yield* setInfo((i) => ({ ...i, state: "passive" }))
        return [true, { _tag: "Passive" }] as const
      }).pipe(Effect.withSpan("kern.host.passivate", { attributes: { agent: options.name } }))).pipe(annotated)

    /** Stops the agent for good (removed from the registry, the host stopping); requests after this are refused. */
    const remove = SynchronizedRef.updateEffect(slot, (current) =>
      Effect.as(current._tag === "Live" ? close(current.live) : Effect.void, { _tag: "Removed" } as const)).pipe(annotated)

    return {
      name: options.name,
      dir: options.dir,
      info: SubscriptionRef.get(info),
      serve,
      wake,
      passivateIfIdle,
      remove
    } as const
  })

export type AgentHandle = Effect.Effect.Success<ReturnType<typeof make>>
