import { Socket } from "@effect/platform"
import { Duration, Effect, Either, Option, Queue, Ref } from "effect"
import { jsonDepthExceeded, tooDeep } from "../../config/json.js"
import type { ChannelState } from "../../tools/Channels.js"
import type { SlackApi } from "./SlackApi.js"
import { SlackApiError } from "./SlackApi.js"
import { ConnectionsOpen, decodeFrame } from "./wire.js"

/** Waits between failed connection attempts: 1 s doubling to a minute; reset once a connection says hello. */
export const reconnectDelay = (failures: number): Duration.Duration =>
  Duration.millis(Math.min(60_000, 1_000 * 2 ** Math.min(failures, 6)))

/** How a connection ended without failing: Slack asked us to reconnect, or the socket closed. */
type Ended = { readonly _tag: "Disconnect"; readonly reason: string } | { readonly _tag: "Closed" }

export interface ConnectionDeps {
  readonly api: SlackApi
  readonly setStatus: (state: ChannelState, detail?: string) => Effect.Effect<void>
  /** Handles an envelope; it is acknowledged only if this succeeds. */
  readonly onEnvelope: (type: string, payload: unknown) => Effect.Effect<void, { readonly message: string }>
}

const decoder = new TextDecoder()

/**
 * One Socket Mode connection: `apps.connections.open` with the app token gives a one-use WebSocket URL; frames are
 * handled one at a time in arrival order, each envelope acknowledged by its id after it is handled. Ends on Slack's
 * `disconnect` (it wants us on a fresh connection) or when the socket closes.
 */
const connectOnce = (deps: ConnectionDeps, hello: Ref.Ref<boolean>) =>
  Effect.gen(function*() {
    const { url } = yield* deps.api.call("apps.connections.open", {}, ConnectionsOpen, deps.api.appToken)
    const socket = yield* Socket.makeWebSocket(url)
    const write = yield* socket.writer
    const frames = yield* Queue.unbounded<string | Uint8Array>()

    const consume = Effect.gen(function*() {
      while (true) {
        const raw = yield* Queue.take(frames)
        const text = typeof raw === "string" ? raw : decoder.decode(raw)
        const deep = jsonDepthExceeded(text)
        if (deep !== undefined) {
          yield* Effect.logWarning(`kern: Slack: skipped a Socket Mode frame ${tooDeep(deep).message}`)
          continue
        }
        const frame = yield* decodeFrame(text).pipe(Effect.option)
        if (Option.isNone(frame)) {
          yield* Effect.logDebug("kern: Slack: a Socket Mode frame kern does not know")
          continue
        }
        const value = frame.value
        if ("envelope_id" in value) {
          const handled = yield* Effect.either(deps.onEnvelope(value.type, value.payload))
          if (Either.isLeft(handled)) {
            // Not acknowledged: Slack delivers it again, and it is handled then.
            yield* Effect.logError(`kern: Slack: an event was not taken (Slack will redeliver it): ${handled.left.message}`)
            continue
          }
          yield* write(JSON.stringify({ envelope_id: value.envelope_id }))
        } else if (value.type === "hello") {
          yield* Ref.set(hello, true)
          yield* deps.setStatus("connected")
        } else {
          const ended: Ended = { _tag: "Disconnect", reason: value.reason ?? "unspecified" }
          return ended
        }
      }
    })

    const run = socket.runRaw((data) => {
      frames.unsafeOffer(data)
    }).pipe(Effect.as<Ended>({ _tag: "Closed" }))
    return yield* Effect.raceFirst(run, consume)
  }).pipe(Effect.scoped, Effect.withSpan("kern.slack.connection"))

const describe = (error: unknown): string =>
  error instanceof SlackApiError
    ? error.message
    : Socket.isSocketError(error)
    ? `the Socket Mode connection failed: ${error.message}`
    : String(error)

/**
 * Keeps a Socket Mode connection up for as long as it runs: reconnects at once when Slack asks, after a backoff
 * when a connection fails or drops; a dead token (invalid_auth and its kin) or Socket Mode disabled for the app stops
 * the channel with one log line and its status saying why. `prepare` runs before each attempt (auth.test until it
 * has the bot's id).
 */
export const supervise = <E, R>(deps: ConnectionDeps, prepare: Effect.Effect<void, E, R>) =>
  Effect.gen(function*() {
    const hello = yield* Ref.make(false)
    let failures = 0
    while (true) {
      yield* Ref.set(hello, false)
      const outcome = yield* Effect.either(Effect.zipRight(prepare, connectOnce(deps, hello)))
      if (yield* Ref.get(hello)) failures = 0
      if (Either.isRight(outcome) && outcome.right._tag === "Disconnect") {
        if (outcome.right.reason === "link_disabled") {
          yield* Effect.logError("kern: Slack: Socket Mode was turned off for this app; the Slack channel stops")
          return yield* deps.setStatus("stopped", "Socket Mode was turned off for this app (link_disabled)")
        }
        yield* deps.setStatus("reconnecting", `Slack asked to reconnect (${outcome.right.reason})`)
        continue
      }
      if (Either.isLeft(outcome) && outcome.left instanceof SlackApiError && outcome.left.fatal) {
        yield* Effect.logError(`kern: Slack: ${outcome.left.message}; the Slack channel stops`)
        return yield* deps.setStatus("stopped", outcome.left.message)
      }
      const detail = Either.isLeft(outcome) ? describe(outcome.left) : "the Socket Mode connection closed"
      const delay = reconnectDelay(failures)
      failures++
      yield* Effect.logWarning(`kern: Slack: ${detail}; reconnecting in ${Duration.format(delay)}`)
      yield* deps.setStatus("reconnecting", detail)
      yield* Effect.sleep(delay)
    }
  })
