import { Context, Data, type Effect, type Stream } from "effect"

/**
 * Where a hosted agent is: `passive` (nothing but its record: no fibers, timers, kern.db handle or channel
 * connections), `waking` (its running layers being built), `live`, `passivating` (its scope closing), or `removed`
 * from the host.
 */
export type HostedState = "passive" | "waking" | "live" | "passivating" | "removed"

/** One hosted agent: its name (the registry's key), its folder and where it is. */
export interface HostedAgent {
  readonly name: string
  readonly dir: string
  readonly state: HostedState
}

/** A hosted agent could not be woken (its folder held by another runtime, its config broken, …). */
export class WakeFailed extends Data.TaggedError("WakeFailed")<{
  readonly name: string
  readonly message: string
}> {}

/**
 * What the wake sources (due times, the shared channel poller) need of the host that runs many agents: the host
 * (`kern serve`) provides it.
 *
 * - `list`: every hosted agent as it is now.
 * - `wake(name, reason)`: makes a passive agent live (its running layers built: its own Scheduler, channels and turn
 *   loop run); nothing when it is waking or live already. Fails with WakeFailed when it cannot be woken. `reason` is
 *   for the host's log (`schedule due 09:00`, `telegram update 1042`).
 * - `changes`: every agent's state at subscription, then each change as it happens. `passive` is emitted only once the
 *   agent's scope has closed (its Scheduler stopped, channels closed, kern.db closed, lock released): the wake sources
 *   then read its kern.db briefly and poll for it; on any other state they leave it alone.
 */
export class HostAgents extends Context.Tag("kern/host/HostAgents")<HostAgents, {
  readonly list: Effect.Effect<ReadonlyArray<HostedAgent>>
  readonly wake: (name: string, reason: string) => Effect.Effect<void, WakeFailed>
  readonly changes: Stream.Stream<HostedAgent>
}>() {}
