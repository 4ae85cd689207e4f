import { Effect, Option, Ref } from "effect"
import type { IncomingEvent, TurnEvent } from "./TurnEvent.js"

/** Where a turn came from, as its first event (`incoming`, `messageId` = `turnId`) says. */
export type TurnOrigin = Pick<typeof IncomingEvent.Type, "interface" | "channel" | "userId">

/**
 * A consumer's memory of where the turns it follows came from, so it routes each event by its turn's own `incoming`
 * event (a conversation's id says nothing about the chat a reply goes to). Fed every event in order: a turn's origin is
 * remembered from its first event and forgotten after its `finish`; a turn whose start it did not see has none.
 */
export const makeTurnOrigins = Effect.map(Ref.make<ReadonlyMap<string, TurnOrigin>>(new Map()), (origins) => ({
  of: (event: TurnEvent): Effect.Effect<Option.Option<TurnOrigin>> =>
    Ref.modify(origins, (known): readonly [Option.Option<TurnOrigin>, ReadonlyMap<string, TurnOrigin>] => {
      if (event.type === "incoming" && event.messageId === event.turnId) {
        const origin: TurnOrigin = { interface: event.interface, channel: event.channel, userId: event.userId }
        return [Option.some(origin), new Map([...known, [event.turnId, origin]])]
      }
      const origin = Option.fromNullable(known.get(event.turnId))
      return event.type === "finish" && Option.isSome(origin)
        ? [origin, new Map([...known].filter(([turnId]) => turnId !== event.turnId))]
        : [origin, known]
    })
}))
