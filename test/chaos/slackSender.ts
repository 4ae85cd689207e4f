import { Clock, Effect, Exit, Ref } from "effect"
import type { Delivered, FakeSlack } from "../support/fakeSlack.js"

interface Pending {
  readonly marker: string
  readonly user: string
  readonly text: string
  readonly delivered: Delivered | undefined
  readonly envelopes: ReadonlyArray<string>
  readonly sentAtMs: number
  /** The connection count when it was last sent: a newer connection means the socket it went on is gone. */
  readonly connection: number
}

/** How long Slack waits for an ack before it sends the envelope again (Slack: 3 s, then retries). */
const ackWaitMs = 5_000

/**
 * Slack's side of Socket Mode delivery, as far as the chaos runs need it: an event is sent on the open connection
 * (waiting while there is none) and sent again in a new envelope until the app acknowledges one, after a new
 * connection or when no ack came in time. Slack gives up after three retries; this keeps going and counts them, so
 * a message is never lost on Slack's side and every loss found is kern's.
 */
export const makeSlackSender = (slack: FakeSlack) =>
  Effect.gen(function*() {
    const pending = yield* Ref.make<ReadonlyArray<Pending>>([])
    const redeliveries = yield* Ref.make(0)

    const send = (marker: string, user: string, text: string) =>
      Ref.update(pending, (all) => [...all, { marker, user, text, delivered: undefined, envelopes: [], sentAtMs: 0, connection: 0 }])

    const attempt = (item: Pending, now: number, connection: number): Effect.Effect<Pending> =>
      Effect.gen(function*() {
        const previous = item.delivered
        const sent = yield* Effect.exit(
          previous === undefined
            ? slack.dm(item.user, item.text)
            : Effect.map(slack.redeliver(previous), (envelopeId): Delivered => ({ ...previous, envelopeId }))
        )
        // No open connection (the agent is down): it waits for the next one.
        if (Exit.isFailure(sent)) return item
        if (previous !== undefined) yield* Ref.update(redeliveries, (n) => n + 1)
        return { ...item, delivered: sent.value, envelopes: [...item.envelopes, sent.value.envelopeId], sentAtMs: now, connection }
      })

    /** One pass: drops what was acknowledged, (re)sends what needs it. */
    const pump = Effect.gen(function*() {
      const acked = new Set((yield* slack.acks).map((ack) => ack.envelopeId))
      const connection = yield* slack.connections
      const now = yield* Clock.currentTimeMillis
      const snapshot = yield* Ref.get(pending)
      const next: Array<Pending> = []
      for (const item of snapshot) {
        if (item.envelopes.some((id) => acked.has(id))) continue
        const due = item.delivered === undefined || item.connection !== connection || now - item.sentAtMs > ackWaitMs
        next.push(due ? yield* attempt(item, now, connection) : item)
      }
      // Messages sent meanwhile stay.
      yield* Ref.update(pending, (all) => [...next, ...all.filter((item) => !snapshot.includes(item))])
    })

    yield* Effect.forkScoped(Effect.forever(Effect.zipRight(pump, Effect.sleep("200 millis"))))

    return {
      send,
      /** Events not yet acknowledged by the app. */
      unacknowledged: Effect.map(Ref.get(pending), (all) => all.length),
      redeliveries: Ref.get(redeliveries)
    } as const
  })

export type SlackSender = Effect.Effect.Success<ReturnType<typeof makeSlackSender>>
