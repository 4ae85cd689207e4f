import { Cause, type Context, Effect, Exit, HashMap, Layer, Option, PubSub, Ref, Scope, Stream } from "effect"
import { type AgentInfo, type AgentState, HostAgentError } from "../../../src/host/AgentHandle.js"
import { HostAgents } from "../../../src/host/HostAgents.js"

interface Entry {
  readonly dir: string
  readonly state: AgentState
  readonly scope: Option.Option<Scope.CloseableScope>
  /** What the live agent's layers provide (its AgentRuntime, for a test to wait for its turns). */
  readonly context: Option.Option<Context.Context<any>>
}

/**
 * A small host for the wake sources' tests: agents start passive; `wake` builds `build(dir)` (the agent's running
 * layers, or nothing) in a child scope and the agent is live; `passivate` closes that scope and the agent is passive
 * again, announced only once the scope is closed, as the real host must. Transitions one at a time.
 */
export const makeTestHost = <A, E>(
  agents: ReadonlyArray<{ readonly name: string; readonly dir: string }>,
  build: (dir: string) => Layer.Layer<A, E>,
  /** Run as a wake starts (a test stops the host there). */
  gate: (name: string) => Effect.Effect<void> = () => Effect.void
) =>
  Effect.gen(function*() {
    const entries = yield* Ref.make(HashMap.fromIterable(agents.map((a) => [a.name, { dir: a.dir, state: "passive", scope: Option.none(), context: Option.none() } as Entry])))
    const events = yield* PubSub.unbounded<AgentInfo>()
    const lock = yield* Effect.makeSemaphore(1)
    const woken = yield* Ref.make<ReadonlyArray<{ readonly name: string; readonly reason: string }>>([])

    const move = (name: string, entry: Entry) =>
      Effect.zipRight(Ref.update(entries, HashMap.set(name, entry)), PubSub.publish(events, { name, dir: entry.dir, state: entry.state }))

    const wake = (name: string, reason: string) =>
      lock.withPermits(1)(Effect.gen(function*() {
        yield* Ref.update(woken, (all) => [...all, { name, reason }])
        yield* gate(name)
        const entry = HashMap.get(yield* Ref.get(entries), name)
        if (Option.isNone(entry)) return yield* new HostAgentError({ name, reason: "unknown", message: `no agent ${name}` })
        if (entry.value.state !== "passive") return
        const dir = entry.value.dir
        yield* move(name, { dir, state: "waking", scope: Option.none(), context: Option.none() })
        const scope = yield* Scope.make()
        const built = yield* Effect.exit(Layer.buildWithScope(build(dir), scope))
        if (Exit.isFailure(built)) {
          yield* Scope.close(scope, Exit.void)
          yield* move(name, { dir, state: "passive", scope: Option.none(), context: Option.none() })
          return yield* new HostAgentError({ name, reason: "unavailable", message: Cause.pretty(built.cause) })
        }
        yield* move(name, { dir, state: "live", scope: Option.some(scope), context: Option.some(built.value) })
      }))

    const passivate = (name: string) =>
      lock.withPermits(1)(Effect.gen(function*() {
        const entry = HashMap.get(yield* Ref.get(entries), name)
        if (Option.isNone(entry) || Option.isNone(entry.value.scope)) return
        const dir = entry.value.dir
        yield* move(name, { dir, state: "passivating", scope: Option.none(), context: Option.none() })
        yield* Scope.close(entry.value.scope.value, Exit.void)
        yield* move(name, { dir, state: "passive", scope: Option.none(), context: Option.none() })
      }))

    // In the order the agents were given.
    const list = Effect.map(Ref.get(entries), (map) =>
      agents.flatMap(({ name }) => Option.match(HashMap.get(map, name), { onNone: () => [], onSome: (entry): Array<AgentInfo> => [{ name, dir: entry.dir, state: entry.state }] })))

    // Subscribed before the states are read: a change in between comes twice, never not at all.
    const changes = Stream.unwrapScoped(Effect.gen(function*() {
      const subscription = yield* PubSub.subscribe(events)
      return Stream.concat(Stream.fromIterable(yield* list), Stream.fromQueue(subscription))
    }))

    // A failing test still closes the live agents before their fakes go.
    yield* Effect.addFinalizer(() =>
      Effect.flatMap(Ref.get(entries), (map) =>
        Effect.forEach([...HashMap.values(map)], (entry) => Option.match(entry.scope, { onNone: () => Effect.void, onSome: (scope) => Scope.close(scope, Exit.void) }))))

    return {
      // What the wake sources use of the host; no request is served here, and the agents are the ones given.
      layer: Layer.succeed(HostAgents, { list, wake, changes, handle: () => Effect.succeedNone, reconcile: () => Effect.void }),
      wake,
      passivate,
      woken: Ref.get(woken),
      contextOf: (name: string) => Effect.map(Ref.get(entries), (map) => Option.flatMap(HashMap.get(map, name), (e) => e.context)),
      stateOf: (name: string) => Effect.map(Ref.get(entries), (map) => Option.match(HashMap.get(map, name), { onNone: () => "removed" as const, onSome: (e) => e.state }))
    } as const
  })
