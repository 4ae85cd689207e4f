import { ClusterSchema, Entity } from "@effect/cluster"
import { Rpc } from "@effect/rpc"
import { SqlClient } from "@effect/sql"
import { Clock, Context, Deferred, Duration, Effect, HashMap, Layer, Option, Ref, Schema, type Scope } from "effect"
import { type ConversationDoor, Conversations, type Delivery, DeliveryError } from "../Conversations.js"
import { InboxEntry } from "../Inbox.js"
import { deliveryFields, pruneJournal } from "./journal.js"

/**
 * A message for one of an agent's conversations, journaled before it is delivered (Persisted) and identified by its
 * inbox id (primaryKey: unique in the agent's inbox, and the journal keys it by the entity's address too), so a
 * replay of the agent's inbox, or a second hand-over, is the same message.
 */
export const Deliver = Rpc.make("Deliver", {
  payload: { conversation: Schema.String, ...InboxEntry.fields },
  primaryKey: (delivery) => String(delivery.id)
}).annotate(ClusterSchema.Persisted, true)

/**
 * Where an agent is live: sent to its entity, it reaches the runner that holds the agent (placing it there if no runner
 * does), which wakes the agent for `reason` and answers with the address of its HTTP server. Not persisted: a request
 * for the agent's HTTP API waits for it (kern serve proxies the request there), and a runner that dies meanwhile is
 * asked again by the caller.
 */
export const Locate = Rpc.make("Locate", {
  payload: { reason: Schema.String },
  success: Schema.Struct({
    url: Schema.String,
    /** Why the agent could not be woken there (a broken config), when it could not. */
    problem: Schema.optional(Schema.String)
  })
})

/**
 * An agent's conversations, as one entity per agent: its id is the agent's name. The cluster places an entity by a
 * hash of its id, one shard lock at a time, so an entity per agent is what keeps all of an agent's conversations on
 * one runner (an entity per `<agent>/<conversation>` would spread them over the runners, each writing the same
 * agent folder). Within the entity, the agent's runtime keeps each conversation's own line of turns.
 */
export const Agent = Entity.make("Agent", [Deliver, Locate])

/** What an agent does with a message: its runtime's `receive` (the conversation is the entity's routing, for logs). */
export type Receive = (delivery: Delivery, conversation: string) => Effect.Effect<void>

/**
 * Where the host keeps an agent live. The cluster calls `hold` when the agent's entity starts on this runner (a
 * message for it, or its shard taken over from a runner that died) and closes the scope when the entity stops here
 * (its shard moved to another runner, or this runner stops). While the scope is open the agent may be live here, with
 * `conversations` as its runtime's Conversations (`conversationsOf(agent)`, built by the cluster: the runtime's `open`
 * registers its `receive`, which the entity's messages wait for); the host wakes it (`wake`: a message for it, or
 * `Locate`) and may passivate it while idle. Once the scope closes it is stopped here. An agent is live only where the
 * cluster holds it: that is what keeps its conversations on one runner. This is the interface the host (`kern serve`)
 * implements; `layerAlwaysLive` is for a process whose agents open their conversations themselves.
 */
export class AgentPlacement extends Context.Tag("kern/runtime/cluster/AgentPlacement")<AgentPlacement, {
  readonly hold: (agent: string, conversations: Conversations["Type"]) => Effect.Effect<void, never, Scope.Scope>
  /** Makes the held agent live here; fails with why it cannot be (its folder or config). */
  readonly wake: (agent: string, reason: string) => Effect.Effect<void, { readonly message: string }>
  /** This runner's HTTP server, as the other runners reach it (`Locate`'s answer). */
  readonly url: string
}>() {
  static readonly layerAlwaysLive = Layer.succeed(AgentPlacement, { hold: () => Effect.void, wake: () => Effect.void, url: "" })
}

/**
 * The agents of this process whose runtime is open: each one's `receive`, registered by its runtime through
 * `conversationsOf(agent)` for as long as its scope is open. A message for an agent whose runtime is not open yet
 * waits for it here (the host is waking it).
 */
export class AgentReceivers extends Effect.Service<AgentReceivers>()("kern/runtime/cluster/AgentReceivers", {
  effect: Effect.gen(function*() {
    const slots = yield* Ref.make(HashMap.empty<string, Deferred.Deferred<Receive>>())
    const slot = (agent: string) =>
      Effect.flatMap(Deferred.make<Receive>(), (fresh) =>
        Ref.modify(slots, (all) =>
          Option.match(HashMap.get(all, agent), {
            onSome: (found) => [found, all] as const,
            onNone: () => [fresh, HashMap.set(all, agent, fresh)] as const
          })))
    /** Registers the agent's `receive` until the scope closes. */
    const register = (agent: string, receive: Receive) =>
      Effect.acquireRelease(
        Effect.flatMap(slot(agent), (found) => Deferred.succeed(found, receive)),
        () =>
          Effect.flatMap(Deferred.make<Receive>(), (fresh) =>
            Ref.update(slots, (all) => HashMap.set(all, agent, fresh)))
      ).pipe(Effect.asVoid)
    /** The agent's `receive`, once its runtime is open. */
    const receiverOf = (agent: string) => Effect.flatMap(slot(agent), Deferred.await)
    return { register, receiverOf } as const
  })
}) {}

/**
 * Hands messages to an agent's entity, wherever it runs (this runner or another): succeeds once the message is in the
 * journal (the sender's acknowledgement); the runner that holds the agent delivers it, now or after a failover.
 */
export const deliverTo = (agent: string) =>
  Effect.gen(function*() {
    const client = yield* Agent.client
    const clock = Clock.make()
    return (delivery: Delivery, conversation: string): Effect.Effect<void, DeliveryError> =>
      client(agent).Deliver({ conversation, ...deliveryFields(delivery) }, { discard: true }).pipe(
        // Already on its way to the agent (journaled by an earlier hand-over): one message.
        Effect.catchTag("AlreadyProcessingMessage", () => Effect.void),
        Effect.mapError((error) =>
          new DeliveryError({ message: `could not hand message ${delivery.id} to agent ${agent}: ${error.message}` })
        ),
        Effect.withClock(clock),
        Effect.withSpan("kern.conversations.deliver")
      )
  })

/**
 * An agent's conversations over the cluster (the `Conversations` of one hosted agent): `open` registers the agent's
 * `receive` on this runner and returns the door, whose `deliver` is `deliverTo(agent)`; `prune` forgets the agent's
 * processed messages (the journal is never pruned by the cluster itself).
 */
export const conversationsOf = (agent: string) =>
  Layer.effect(
    Conversations,
    Effect.gen(function*() {
      const receivers = yield* AgentReceivers
      const prune = pruneJournal(yield* SqlClient.SqlClient, { type: Agent.type, id: agent }, `agent ${agent}'s journal`)
      const deliver = yield* deliverTo(agent)
      const open = (receive: (delivery: Delivery) => Effect.Effect<void>) =>
        Effect.gen(function*() {
          yield* receivers.register(agent, receive)
          yield* prune
          return { deliver, prune } satisfies ConversationDoor
        })
      return Conversations.of({ open })
    })
  )

/**
 * The Agent entity on this runner: a message for an agent holds the agent live here (AgentPlacement) and is handed to
 * its runtime's `receive`, which completes once the message is in the session; only then does the journal mark it
 * processed. A runner killed before that leaves it pending, and the runner that takes the agent over delivers it
 * again: at least once, and the runtime's `receive` dedupes by inbox id (a message already in the session is not
 * recorded twice).
 */
export const entityLayer = Agent.toLayer(
  Effect.gen(function*() {
    const address = yield* Entity.CurrentAddress
    const agent = address.entityId
    const receivers = yield* AgentReceivers
    const placement = yield* AgentPlacement
    const conversations = yield* Layer.build(conversationsOf(agent))
    yield* placement.hold(agent, Context.get(conversations, Conversations))
    return Agent.of({
      Deliver: ({ payload }) => {
        const { conversation, ...delivery } = payload
        // An agent that cannot wake keeps the message pending (logged): it is delivered once the agent can be.
        const woken = placement.wake(agent, "a message").pipe(
          Effect.tapError((error) => Effect.logWarning(`kern: agent ${agent} could not wake for a message: ${error.message}`)),
          Effect.either
        )
        return Effect.zipRight(woken, Effect.flatMap(receivers.receiverOf(agent), (receive) => receive(delivery, conversation)))
      },
      Locate: ({ payload }) =>
        placement.wake(agent, payload.reason).pipe(
          Effect.match({
            onFailure: (error) => ({ url: placement.url, problem: error.message }),
            onSuccess: () => ({ url: placement.url })
          })
        )
    })
  }),
  // The entity lives as long as the cluster keeps the agent here: the host passivates an idle agent, not the cluster.
  { concurrency: "unbounded", maxIdleTime: Duration.infinity }
)

/** Where `agent` is live: the address of the runner holding it (woken there for `reason`), from anywhere. */
export const locate = (agent: string, reason: string) =>
  Effect.flatMap(Agent.client, (client) => client(agent).Locate({ reason }))
