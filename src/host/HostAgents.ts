import { Context, Duration, Effect, Option, Ref, Schedule, Stream, SubscriptionRef } from "effect"
import { loadConfig } from "../config/AgentConfig.js"
import * as KnownSecrets from "../config/KnownSecrets.js"
import { agentToken } from "../channels/web/serverSetup.js"
import { agentPaths } from "../config/paths.js"
import * as HostedMark from "../storage/HostedMark.js"
import * as LockFile from "../storage/LockFile.js"
import * as AgentHandle from "./AgentHandle.js"
import type { HostedAgent } from "./HostConfig.js"
import { buildLive, liveAgentLayer, type LiveAgent, type LiveOptions } from "./liveAgent.js"

/**
 * The agents a `kern serve` hosts, by name: what the host's server routes to, what `GET /agents` lists, and what wakes
 * an agent for a due schedule or a channel event (`wake`, the hostwake part's HostAgents port). The registry follows
 * host.json (`reconcile`): an agent added starts passive, one removed is stopped; the others are left as they are.
 */
export class HostAgents extends Context.Tag("kern/host/HostAgents")<HostAgents, {
  readonly list: Effect.Effect<ReadonlyArray<AgentHandle.AgentInfo>>
  readonly wake: (name: string, reason: string) => Effect.Effect<void, AgentHandle.HostAgentError>
  /** The list again each time an agent is added, removed or changes state. */
  readonly changes: Stream.Stream<ReadonlyArray<AgentHandle.AgentInfo>>
  readonly handle: (name: string) => Effect.Effect<Option.Option<AgentHandle.AgentHandle>>
  /** Makes the registry the given agents: new ones added passive, missing ones stopped, the rest untouched. */
  readonly reconcile: (agents: ReadonlyArray<HostedAgent>) => Effect.Effect<void>
}>() {}

export interface HostAgentsOptions {
  readonly idleSeconds: number
  /**
   * The host's home: each agent added is marked as this host's (`.kern/hosted.json`), and unmarked when removed, so
   * clients given its folder find it here (src/storage/HostedMark.ts). No marks without it.
   */
  readonly home?: string | undefined
  readonly live: LiveOptions
  /** How an agent is brought to life; the agent's own running layers by default (tests pass a smaller one). */
  readonly build?: ((agent: HostedAgent) => Effect.Effect<LiveAgent, { readonly message: string }>) | undefined
}

/** How often idle agents are looked for: a quarter of idleSeconds, between 50 ms and 10 s. */
const sweepEvery = (idleSeconds: number) => Duration.millis(Math.min(10_000, Math.max(50, idleSeconds * 250)))

/** The agent's own running layers, over its token (KERN_AUTH_TOKEN, made once and kept as `kern start` does). */
const buildAgent = (live: LiveOptions) => (agent: HostedAgent) =>
  Effect.gen(function*() {
    const loaded = yield* loadConfig(agent.dir)
    if (!loaded.fileExists) return yield* Effect.fail({ message: `${agent.dir} is not an agent folder (kern init makes one)` })
    const token = yield* agentToken(loaded)
    if (live.logging === undefined) return yield* buildLive(liveAgentLayer(agent, token, live))
    // The token agentToken may have just made is a secret of the folder too.
    const within = live.logging(KnownSecrets.fromConfig({ ...loaded, env: { ...loaded.env, KERN_AUTH_TOKEN: token } }).secrets)
    return { ...(yield* within(buildLive(liveAgentLayer(agent, token, live)))), within }
  })

export const make = (options: HostAgentsOptions) =>
  Effect.gen(function*() {
    const context = yield* Effect.context<Effect.Effect.Context<ReturnType<ReturnType<typeof buildAgent>>>>()
    const build = options.build ?? ((agent: HostedAgent) =>
      buildAgent(options.live)(agent).pipe(
        Effect.mapError((error) => ({ message: error.message })),
        Effect.provide(context)
      ))
    const handles = yield* Ref.make<ReadonlyMap<string, AgentHandle.AgentHandle>>(new Map())
    const version = yield* SubscriptionRef.make(0)
    const changed = SubscriptionRef.update(version, (n) => n + 1)

    const list = Effect.flatMap(Ref.get(handles), (map) => Effect.forEach([...map.values()], (handle) => handle.info))
    const handle = (name: string) => Effect.map(Ref.get(handles), (map) => Option.fromNullable(map.get(name)))

    const wake = (name: string, reason: string) =>
      Effect.flatMap(handle(name), Option.match({
        onNone: () => Effect.fail(new AgentHandle.HostAgentError({ name, reason: "unknown", message: `no agent ${name} is hosted here` })),
        onSome: (found) => found.wake(reason)
      }))

    /** Marks the folder as this host's, unless another host that runs has it marked as its own. */
    const mark = (kernDir: string, mine: HostedMark.HostedMark) =>
      Effect.gen(function*() {
        const current = yield* HostedMark.hostOf(kernDir)
        const other = Option.filter(current, (c) => (c.mark.home !== mine.home || c.mark.name !== mine.name) && Option.isSome(c.holder))
        if (Option.isSome(other)) {
          return yield* options.live.report(
            `agent ${mine.name}: the host of ${other.value.mark.home} hosts its folder too (as ${other.value.mark.name}); clients given the folder find that one`
          )
        }
        yield* HostedMark.write(kernDir, mine)
      })

    const unmark = (dir: string, name: string) =>
      options.home === undefined
        ? Effect.void
        : HostedMark.removeIf(agentPaths(dir).kernDir, { home: options.home, name }).pipe(
          Effect.catchAll((error) => Effect.logWarning(`kern serve: could not remove ${name}'s hosted mark: ${error.message}`)),
          Effect.provide(context)
        )

    /**
     * When an agent is added: its token is made (clients need it before its first wake), and what is wrong is reported:
     * not an agent folder, or a folder another runtime holds, which is not taken from it (waking it is refused).
     */
    const heldBy = (agent: HostedAgent) =>
      Effect.gen(function*() {
        const loaded = yield* loadConfig(agent.dir)
        if (!loaded.fileExists) return Option.some(`${agent.dir} is not an agent folder (kern init makes one)`)
        yield* agentToken(loaded)
        if (options.home !== undefined) yield* mark(loaded.paths.kernDir, { home: options.home, name: agent.name })
        const holder = yield* LockFile.readHolder(loaded.paths.lockFile)
        return Option.map(holder, (h) => `its folder is held by pid ${h.pid} (${h.command}); it is not hosted until that stops`)
      }).pipe(Effect.catchAll((error) => Effect.succeed(Option.some(error.message))), Effect.provide(context))

    const reconcile = (agents: ReadonlyArray<HostedAgent>) =>
      Effect.gen(function*() {
        const current = yield* Ref.get(handles)
        const wanted = new Map(agents.map((agent) => [agent.name, agent]))
        const next = new Map(current)
        for (const [name, existing] of current) {
          const still = wanted.get(name)
          if (still === undefined || still.dir !== existing.dir) {
            yield* Effect.logInfo(`kern serve: ${name} is no longer hosted`)
            yield* existing.remove
            yield* unmark(existing.dir, name)
            next.delete(name)
          }
        }
        for (const agent of agents) {
          if (next.has(agent.name)) continue
          const added = yield* AgentHandle.make({
            name: agent.name,
            dir: agent.dir,
            build: build(agent),
            idleMs: options.idleSeconds * 1000,
            changed
          })
          next.set(agent.name, added)
          const held = yield* heldBy(agent)
          if (Option.isSome(held)) yield* options.live.report(`agent ${agent.name}: ${held.value}`)
          else yield* Effect.logInfo(`kern serve: hosting ${agent.name} (${agent.dir})`)
        }
        yield* Ref.set(handles, next)
        yield* changed
      }).pipe(Effect.withSpan("kern.host.reconcile"))

    // One sweep for every agent: each passivates itself when it has been idle long enough.
    yield* Effect.forkScoped(
      Effect.flatMap(Ref.get(handles), (map) => Effect.forEach([...map.values()], (h) => h.passivateIfIdle, { discard: true })).pipe(
        Effect.catchAllCause((cause) => Effect.logWarning("kern serve: an idle sweep failed", cause)),
        Effect.repeat(Schedule.spaced(sweepEvery(options.idleSeconds)))
      )
    )
    // Stopping the host stops every live agent (its turn loop, channels, kern.db, lock), one after another.
    yield* Effect.addFinalizer(() => Effect.flatMap(Ref.get(handles), (map) => Effect.forEach([...map.values()], (h) => h.remove, { discard: true })))

    const changes = Stream.mapEffect(version.changes, () => list)
    return HostAgents.of({ list, wake, changes, handle, reconcile })
  })
