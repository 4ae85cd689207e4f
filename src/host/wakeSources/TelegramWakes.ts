import { HttpClient } from "@effect/platform"
import { Duration, Effect, Exit, Fiber, FiberMap, FiberSet, HashMap, Option, Ref } from "effect"
import * as Api from "../../channels/telegram/api.js"
import { backoff } from "../../channels/telegram/TelegramChannel.js"
import type { HostAgentError } from "../AgentHandle.js"
import type { TelegramWatch } from "./passiveRead.js"

/** Where two watches are the same bot. */
const botKey = (watch: TelegramWatch) => `${watch.root}\u0000${watch.token}`

/**
 * The shared Telegram poller: one fiber per bot token of a passive agent, long-polling getUpdates from the offset the
 * agent's kern.db keeps. It never consumes: it sends that same offset each time (never a later one, which would
 * confirm updates to Telegram), writes no cursor and hands nothing over. When updates are waiting it wakes the agent
 * and stops; the agent's own channel, starting, polls from the same stored offset and gets the same updates, storing
 * each in its inbox with the offset in one transaction as it always does. So an update cannot be lost (nothing moved
 * past it but the agent) nor taken twice (only the agent's transaction moves past it), whatever is killed when; the
 * cost is one more getUpdates round trip on a wake, answered at once since the updates are waiting.
 *
 * While the agent is waking or live its own channel polls and this poller leaves the token alone (`release`). Two
 * polls of one token end the older with 409 (Telegram allows one poller): a passivating or waking agent's overlap is
 * retried by either side with backoff, and loses nothing.
 */
export const makeTelegramWakes = (wake: (name: string, reason: string) => Effect.Effect<void, HostAgentError>) =>
  Effect.gen(function*() {
    const http = yield* HttpClient.HttpClient
    const pollers = yield* FiberMap.make<string>()
    const wakes = yield* FiberSet.make()
    /** Which agent each watched bot belongs to: one poller per token. */
    const owners = yield* Ref.make(HashMap.empty<string, string>())
    /** The update that last woke each agent, and how often in a row: an agent passivated short of it waits longer. */
    const lastWake = yield* Ref.make(HashMap.empty<string, { readonly updateId: number; readonly times: number }>())

    const poll = (name: string, watch: TelegramWatch) =>
      Effect.gen(function*() {
        const api = yield* Api.make({ root: watch.root, token: watch.token }).pipe(Effect.provideService(HttpClient.HttpClient, http))
        let failures = 0
        const pause = (wait: Duration.Duration, why: string) =>
          Effect.zipRight(Effect.logWarning(`kern: host: telegram for ${name}: ${why}; polling again in ${Duration.format(wait)}`), Effect.sleep(wait))
        while (true) {
          const polled = yield* Effect.either(api.getUpdates(watch.offset))
          if (polled._tag === "Left") {
            const error = polled.left
            if (error.reason === "unauthorized") {
              // The agent's own channel says so in `kern status` when it runs; a message woke nothing meanwhile.
              return yield* Effect.logWarning(`kern: host: telegram for ${name}: ${error.message}; not polled while it is passive`)
            }
            failures++
            yield* pause(error.retryAfterSeconds === undefined ? backoff(failures) : Duration.seconds(error.retryAfterSeconds), error.message)
            continue
          }
          failures = 0
          const first = polled.right[0]
          if (first === undefined) continue
          const seen = yield* Ref.modify(lastWake, (map) => {
            const last = HashMap.get(map, name)
            const times = Option.isSome(last) && last.value.updateId === first.update_id ? last.value.times + 1 : 1
            return [times, HashMap.set(map, name, { updateId: first.update_id, times })]
          })
          // The same update woke it before and it was passivated without taking it (its channel kept failing on it):
          // woken again after a wait that grows, not at once in a loop.
          if (seen > 1) yield* pause(backoff(seen), `update ${first.update_id} woke it before and is still waiting`)
          const woke = yield* FiberSet.run(wakes, wake(name, `telegram update ${first.update_id}`))
          const exit = yield* Fiber.await(woke)
          if (Exit.isSuccess(exit)) return
          failures++
          yield* pause(backoff(failures), `could not wake it: ${exit.cause.toString()}`)
        }
      }).pipe(Effect.withSpan("kern.host.telegramWatch", { attributes: { agent: name } }))

    /** Polls for a passive agent's bot (one poller per token: a second agent with the same token is refused, logged). */
    const watch = (name: string, telegram: TelegramWatch) =>
      Effect.gen(function*() {
        const key = botKey(telegram)
        const owner = yield* Ref.modify(owners, (map) => {
          const held = HashMap.get(map, key)
          return Option.isSome(held) && held.value !== name
            ? [held.value, map]
            : [name, HashMap.set(HashMap.filter(map, (who) => who !== name), key, name)]
        })
        if (owner !== name) {
          yield* FiberMap.remove(pollers, name)
          return yield* Effect.logWarning(`kern: host: ${name} and ${owner} have the same Telegram bot token; only ${owner}'s is polled while passive`)
        }
        yield* FiberMap.run(pollers, name, poll(name, telegram))
      })

    /** The agent is not passive: its own channel polls (or none), this poller stops at once. */
    const release = (name: string) =>
      Effect.zipRight(
        FiberMap.remove(pollers, name),
        Ref.update(owners, HashMap.filter((who) => who !== name))
      )

    return { watch, release, polling: FiberMap.size(pollers) } as const
  })
