import { HttpBody, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Cause, Clock, Effect, Exit, identity, Option, Ref, Schema, Scope, Stream, SubscriptionRef, SynchronizedRef } from "effect"
import type { Conversations } from "../runtime/Conversations.js"
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

/**
 * Where a hosted agent is: `passive` (nothing but its record: no fibers, timers, kern.db handle or channel
 * connections), `waking` (its running layers being built), `live`, `passivating` (its scope closing), or `removed` from
 * the host (said once, on the registry's `changes`, as it goes).
 */
export type AgentState = "passive" | "waking" | "live" | "passivating" | "removed"

export class HostAgentError extends Schema.TaggedError<HostAgentError>()("HostAgentError", {
  name: Schema.String,
  /**
   * `elsewhere`: among several runners, another one holds the agent (kern serve routes the request there); `asleep`:
   * it is passive here and the request was not to wake it (serveAwake).
   */
  reason: Schema.Literal("unknown", "unavailable", "removed", "elsewhere", "asleep"),
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
  /** Why the live agent is never passivated (keptLive.ts: Slack, or Telegram among several runners). */
  readonly keptLive?: string | undefined
}

/** The conversations' door of an agent the cluster holds on this runner (AgentPlacement.hold). */
export type Held = Conversations["Type"]

export interface AgentHandleOptions {
  readonly name: string
  readonly dir: string
  /**
   * Builds the running agent (over the cluster's door when `held`); its failure is the wake's problem.
   */
  readonly build: (held: Option.Option<Held>) => Effect.Effect<LiveAgent, { readonly message: string }>
  /**
   * Among several runners: the agent may be live only while the cluster holds it here (`hold`); without a hold a
   * wake is refused as `elsewhere`.
   */
  readonly clustered?: boolean | undefined
  readonly idleMs: number
  /** The host's log: each wake (and why), each passivation, an agent kept live. */
  readonly report: (line: string) => Effect.Effect<void>
  /** Told of every change of state, in order (the host's `changes`). */
  readonly changed: (info: AgentInfo) => Effect.Effect<void>
}

const problemOf = (cause: Cause.Cause<{ readonly message: string }>): string =>
  Option.match(Cause.failureOption(cause), { onNone: () => "it failed unexpectedly (see the host's log)", onSome: (error) => error.message })

export const make = (options: AgentHandleOptions) =>
  Effect.gen(function*() {
    const slot = yield* SynchronizedRef.make<Slot>({ _tag: "Passive" })
    const info = yield* SubscriptionRef.make<AgentInfo>({ name: options.name, dir: options.dir, state: "passive" })
    const inFlight = yield* Ref.make(0)
    const lastActiveMs = yield* Ref.make(yield* Clock.currentTimeMillis)
    /** The cluster's hold on this runner, when clustered: what the agent's runtime delivers through. */
    const grant = yield* Ref.make(Option.none<Held>())
    const elsewhere = new HostAgentError({
      name: options.name,
      reason: "elsewhere",
      message: `agent ${options.name} is held by another runner`
    })

    // Every line the agent logs, from its wake (the fibers its layers fork inherit this) to each request it serves,
    // names it: the host's log is one file for every agent, and `kern logs DIR` picks an agent's lines by this.
    const annotated = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.annotateLogs(effect, "agent", options.name)
    const setInfo = (f: (info: AgentInfo) => AgentInfo) => Effect.flatMap(SubscriptionRef.updateAndGet(info, f), options.changed)
    const touch = Effect.flatMap(Clock.currentTimeMillis, (now) => Ref.set(lastActiveMs, now))
    const removed = new HostAgentError({ name: options.name, reason: "removed", message: `agent ${options.name} is no longer hosted` })

    const wakeNow = (reason: string, hold: Option.Option<Held>) =>
      Effect.gen(function*() {
        yield* setInfo((i) => ({ ...i, state: "waking" }))
        yield* options.report(`agent ${options.name}: waking (${reason})`)
        // Built interruptibly: a request wakes the agent inside its acquire step (serve: acquireUseRelease), which is
        // uninterruptible, and every fiber the agent's layers fork would inherit that; closing its scope then waits
        // forever on loops that cannot be interrupted (passivation and the host's stop hung so).
        const live = yield* Effect.interruptible(options.build(hold)).pipe(
          // Failed or interrupted (the request that woke it went away), it is passive again, nothing held.
          Effect.onExit((exit) =>
            Exit.isSuccess(exit)
              ? Effect.void
              : setInfo((i) => Exit.isInterrupted(exit) ? { ...i, state: "passive" } : { ...i, state: "passive", problem: problemOf(exit.cause) })
          ),
          Effect.mapError((error) => new HostAgentError({ name: options.name, reason: "unavailable", message: `agent ${options.name} could not start: ${error.message}` }))
        )
        const keptLive = Option.getOrUndefined(live.activity.keptLive)
        if (keptLive !== undefined) yield* options.report(`agent ${options.name}: kept live, never passivated: ${keptLive}`)
        yield* setInfo((i) => ({ name: i.name, dir: i.dir, state: "live", ...(keptLive === undefined ? {} : { keptLive }) }))
        return live
      }).pipe(Effect.withSpan("kern.host.wake", { attributes: { agent: options.name, reason } }))

    const asleep = new HostAgentError({ name: options.name, reason: "asleep", message: `agent ${options.name} is passive` })

    /** The live agent, woken if need be (unless not `waking`); `count` marks a request in flight in the same step. */
    const acquire = (reason: string, count: boolean, waking = true) =>
      SynchronizedRef.modifyEffect(slot, (current) => {
        const held = (live: LiveAgent) => Effect.as(Effect.zipRight(touch, count ? Ref.update(inFlight, (n) => n + 1) : Effect.void), live)
        switch (current._tag) {
          case "Removed":
            return Effect.fail(removed)
          case "Live":
            return Effect.map(held(current.live), (live) => [live, current] as const)
          case "Passive":
            return Effect.flatMap(Ref.get(grant), (hold) =>
              options.clustered === true && Option.isNone(hold)
                ? Effect.fail(elsewhere)
                : !waking
                ? Effect.fail(asleep)
                : Effect.flatMap(wakeNow(reason, hold), (live) => Effect.map(held(live), () => [live, { _tag: "Live", live }] as const)))
        }
      })

    /**
     * The request served by the agent's own app; the agent stays live while it is in flight. A streamed answer (an event
     * stream) is in flight until its body ends or its client goes away, not only until the app has made the response:
     * counted off when the app returned, a browser tab's open event stream let the agent be passivated under it.
     */
    const serveWith = (waking: boolean) => (request: HttpServerRequest.HttpServerRequest) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.gen(function*() {
          const live = yield* acquire(`${request.method} ${request.url}`, true, waking)
          const done = Effect.zipRight(Ref.update(inFlight, (n) => n - 1), touch)
          const response = yield* restore((live.within ?? identity)(Effect.provideService(live.app, HttpServerRequest.HttpServerRequest, request))).pipe(
            Effect.scoped,
            Effect.onExit((exit) => Exit.isFailure(exit) ? done : Effect.void)
          )
          if (response.body._tag !== "Stream") return yield* Effect.as(done, response)
          const body = response.body
          return HttpServerResponse.setBody(response, HttpBody.stream(Stream.ensuring(body.stream, done), body.contentType, body.contentLength))
        })
      ).pipe(annotated)

    const serve = serveWith(true)

    /**
     * The request served only if the agent is live here (or, among runners, held elsewhere: `elsewhere`); a passive
     * agent is not woken for it (`asleep`): a login link's ticket lives in the live agent's memory and nowhere else.
     */
    const serveAwake = serveWith(false)

    /** The live agent's browser sessions' check; none while it is not live here. */
    const liveSessions = Effect.map(SynchronizedRef.get(slot), (current) =>
      current._tag === "Live" ? Option.fromNullable(current.live.sessions) : Option.none())

    const wake = (reason: string) => Effect.asVoid(acquire(reason, false)).pipe(annotated)

    const close = (live: LiveAgent) => Scope.close(live.scope, Exit.void)

    /**
     * Closes the agent's scope if it has been idle for idleMs with nothing going on. Activity found counts as activity
     * now, so the idle time runs from when the agent last had anything to do. An agent kept live (Slack) never is.
     */
    const passivateIfIdle = SynchronizedRef.modifyEffect(slot, (current) =>
      Effect.gen(function*() {
        if (current._tag !== "Live" || options.idleMs <= 0 || Option.isSome(current.live.activity.keptLive)) return [false, current] as const
        if ((yield* Ref.get(inFlight)) > 0 || (yield* current.live.activity.busy)) {
          yield* touch
          return [false, current] as const
        }
        if ((yield* Clock.currentTimeMillis) - (yield* Ref.get(lastActiveMs)) < options.idleMs) return [false, current] as const
        yield* options.report(`agent ${options.name}: passivating (idle)`)
        yield* setInfo((i) => ({ ...i, state: "passivating" }))
        yield* close(current.live)
        // Said only now that its scope is closed: the wake sources read its kern.db and poll its bot from here on.
        yield* setInfo((i) => ({ ...i, state: "passive" }))
        return [true, { _tag: "Passive" }] as const
      }).pipe(Effect.withSpan("kern.host.passivate", { attributes: { agent: options.name } }))).pipe(annotated)

    /**
     * The cluster holds the agent on this runner until the scope closes: it may be live here meanwhile (woken by a
     * message, a request or `wake`, passivated while idle); when the hold ends it is stopped and stays passive here.
     */
    const hold = (conversations: Held) =>
      Effect.acquireRelease(
        Ref.set(grant, Option.some(conversations)),
        () =>
          SynchronizedRef.updateEffect(slot, (current) =>
            Effect.gen(function*() {
              yield* Ref.set(grant, Option.none())
              if (current._tag !== "Live") return current
              yield* Effect.logInfo(`kern serve: stopping ${options.name} (the cluster moved it)`)
              yield* close(current.live)
              yield* setInfo((i) => ({ ...i, state: "passive" }))
              return { _tag: "Passive" } as const
            }))
      ).pipe(Effect.asVoid, annotated)

    /** Stops the agent for good (removed from the registry, the host stopping); requests after this are refused. */
    const remove = SynchronizedRef.updateEffect(slot, (current) =>
      current._tag === "Removed"
        ? Effect.succeed(current)
        : Effect.as(
          Effect.zipRight(current._tag === "Live" ? close(current.live) : Effect.void, setInfo((i) => ({ name: i.name, dir: i.dir, state: "removed" }))),
          { _tag: "Removed" } as const
        )).pipe(annotated)

    return {
      name: options.name,
      dir: options.dir,
      info: SubscriptionRef.get(info),
      serve,
      serveAwake,
      liveSessions,
      wake,
      hold,
      passivateIfIdle,
      remove
    } as const
  })

export type AgentHandle = Effect.Effect.Success<ReturnType<typeof make>>
