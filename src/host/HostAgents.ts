import { Context, Duration, Effect, Layer, Option, PubSub, Ref, Schedule, Stream } from "effect"
import { Conversations } from "../runtime/Conversations.js"
import { loadConfig } from "../config/AgentConfig.js"
import * as KnownSecrets from "../config/KnownSecrets.js"
import { agentToken } from "../channels/web/serverSetup.js"
import { agentPaths } from "../config/paths.js"
import * as HostedMark from "../storage/HostedMark.js"
import * as LockFile from "../storage/LockFile.js"
import * as MemoryReclaim from "./memoryReclaim.js"
import * as AgentHandle from "./AgentHandle.js"
import type { HostedAgent } from "./HostConfig.js"
import { buildLive, liveAgentLayer, type LiveAgent, type LiveOptions } from "./liveAgent.js"

/**
 * The agents a `kern serve` hosts, by name: what the host's server routes to, what `GET /agents` lists, and what the
 * wake sources (src/host/wakeSources: due times, the shared Telegram poller) watch and wake. The registry follows
 * host.json (`reconcile`): an agent added starts passive, one removed is stopped; the others are left as they are.
 *
 * - `list`: every hosted agent as it is now.
 * - `wake(name, reason)`: makes a passive agent live (its own Scheduler, channels and turn loop run); nothing when it is
 *   waking or live already. Fails with HostAgentError when it cannot be woken. `reason` is for the host's log
 *   (`a schedule is due`, `telegram update 1042`).
 * - `changes`: every agent's state at subscription, then each change of one agent as it happens, in order. `passive`
 *   is said only once the agent's scope has closed (its Scheduler stopped, channels closed, kern.db closed, lock
 *   released): the wake sources then read its kern.db briefly and poll for it. `removed` is said as an agent goes.
 */
export class HostAgents extends Context.Tag("kern/host/HostAgents")<HostAgents, {
  readonly list: Effect.Effect<ReadonlyArray<AgentHandle.AgentInfo>>
  readonly wake: (name: string, reason: string) => Effect.Effect<void, AgentHandle.HostAgentError>
  readonly changes: Stream.Stream<AgentHandle.AgentInfo>
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
  readonly build?:
    | ((agent: HostedAgent, held: Option.Option<AgentHandle.Held>) => Effect.Effect<LiveAgent, { readonly message: string }>)
    | undefined
  /** Among several runners: agents are live only while the cluster holds them here (AgentHandle `clustered`). */
  readonly clustered?: boolean | undefined
  /** How the memory of passivated agents is given back (memoryReclaim.ts); two full collections by default. */
  readonly reclaimMemory?: Effect.Effect<void> | undefined
}

/** How long the host waits after the last passivation before it gives the freed memory back. */
export const reclaimQuiet = Duration.seconds(5)

/** How often idle agents are looked for: a quarter of idleSeconds, between 50 ms and 10 s. */
const sweepEvery = (idleSeconds: number) => Duration.millis(Math.min(10_000, Math.max(50, idleSeconds * 250)))

/**
 * The agent's own running layers, over its token (KERN_AUTH_TOKEN, made once and kept as `kern start` does); when the
 * cluster holds it here, over the cluster's door, and only with its kern.db on PostgreSQL (every runner reads it there).
 */
const buildAgent = (live: LiveOptions) => (agent: HostedAgent, held: Option.Option<AgentHandle.Held>) =>
  Effect.gen(function*() {
    const loaded = yield* loadConfig(agent.dir)
    if (!loaded.fileExists) return yield* Effect.fail({ message: `${agent.dir} is not an agent folder (kern init makes one)` })
    if (Option.isSome(held) && loaded.config.database === undefined) {
      return yield* Effect.fail({
        message: `runners sharing agents keep each agent's kern.db on PostgreSQL: set database.url in ${agent.dir}/.kern/config.json`
      })
    }
    const token = yield* agentToken(loaded)
    const layer = liveAgentLayer(agent, token, live, Option.map(held, (door) => Layer.succeed(Conversations, door)))
    if (live.logging === undefined) return yield* buildLive(layer)
    // The token agentToken may have just made is a secret of the folder too.
    const within = live.logging(KnownSecrets.fromConfig({ ...loaded, env: { ...loaded.env, KERN_AUTH_TOKEN: token } }).secrets)
    return { ...(yield* within(buildLive(layer))), within }
  })

export const make = (options: HostAgentsOptions) =>
  Effect.gen(function*() {
    const context = yield* Effect.context<Effect.Effect.Context<ReturnType<ReturnType<typeof buildAgent>>>>()
    const build = options.build ?? ((agent: HostedAgent, held: Option.Option<AgentHandle.Held>) =>
      buildAgent(options.live)(agent, held).pipe(
        Effect.mapError((error) => ({ message: error.message })),
        Effect.provide(context)
      ))
    const handles = yield* Ref.make<ReadonlyMap<string, AgentHandle.AgentHandle>>(new Map())
    const events = yield* PubSub.unbounded<AgentHandle.AgentInfo>()
    const changed = (info: AgentHandle.AgentInfo) => Effect.asVoid(PubSub.publish(events, info))
    const reclaim = yield* MemoryReclaim.make({ quiet: reclaimQuiet, collect: options.reclaimMemory })

    const list = Effect.flatMap(Ref.get(handles), (map) =>
      Effect.map(Effect.forEach([...map.values()], (handle) => handle.info), (all) => all.filter((info) => info.state !== "removed")))
    const handle = (name: string) => Effect.map(Ref.get(handles), (map) => Option.fromNullable(map.get(name)))

    const wake = (name: string, reason: string) =>
      Effect.flatMap(handle(name), Option.match({
        onNone: () => Effect.fail(new AgentHandle.HostAgentError({ name, reason: "unknown", message: `no agent ${name} is hosted here` })),
        onSome: (found) => found.wake(reason)
      }))

    /** Marks the folder as hosted here too: every runner that hosts it has its entry (HostedMark.ts). */
    const mark = (kernDir: string, mine: HostedMark.HostedMark) => HostedMark.write(kernDir, { ...mine, address: options.live.hostUrl })

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
        const added: Array<AgentHandle.AgentHandle> = []
        for (const [name, existing] of current) {
          const still = wanted.get(name)
          if (still === undefined || still.dir !== existing.dir) {
            yield* Effect.logInfo(`kern serve: ${name} is no longer hosted`)
            yield* existing.remove
            yield* reclaim.request
            yield* unmark(existing.dir, name)
            next.delete(name)
          }
        }
        for (const agent of agents) {
          if (next.has(agent.name)) continue
          const fresh = yield* AgentHandle.make({
            name: agent.name,
            dir: agent.dir,
            build: (held) => build(agent, held),
            clustered: options.clustered,
            idleMs: options.idleSeconds * 1000,
            report: options.live.report,
            changed
          })
          next.set(agent.name, fresh)
          added.push(fresh)
          const held = yield* heldBy(agent)
          if (Option.isSome(held)) yield* options.live.report(`agent ${agent.name}: ${held.value}`)
          else yield* Effect.logInfo(`kern serve: hosting ${agent.name} (${agent.dir})`)
        }
        yield* Ref.set(handles, next)
        // Said once they can be woken by name.
        yield* Effect.forEach(added, (fresh) => Effect.flatMap(fresh.info, changed), { discard: true })
      }).pipe(Effect.withSpan("kern.host.reconcile"))

    // One sweep for every agent: each passivates itself when it has been idle long enough; what they held is given
    // back once the host is quiet.
    yield* Effect.forkScoped(
      Effect.flatMap(Ref.get(handles), (map) => Effect.forEach([...map.values()], (h) => h.passivateIfIdle)).pipe(
        Effect.flatMap((passivated) => passivated.includes(true) ? reclaim.request : Effect.void),
        Effect.catchAllCause((cause) => Effect.logWarning("kern serve: an idle sweep failed", cause)),
        Effect.repeat(Schedule.spaced(sweepEvery(options.idleSeconds)))
      )
    )
    // Stopping the host stops every live agent (its turn loop, channels, kern.db, lock), one after another.
    yield* Effect.addFinalizer(() => Effect.flatMap(Ref.get(handles), (map) => Effect.forEach([...map.values()], (h) => h.remove, { discard: true })))

    // Subscribed before the states are read: a change in between comes twice, never not at all.
    const changes = Stream.unwrapScoped(Effect.gen(function*() {
      const subscription = yield* PubSub.subscribe(events)
      return Stream.concat(Stream.fromIterable(yield* list), Stream.fromQueue(subscription))
    }))
    return HostAgents.of({ list, wake, changes, handle, reconcile })
  })
