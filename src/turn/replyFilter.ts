import { Effect } from "effect"
import { isNoReply } from "../session/envelope.js"
import { idsOf, type TurnEvent, type TurnIds } from "./TurnEvent.js"

const marker = /(^|\s)NO_REPLY\s*$/
const holdBack = "NO_REPLY".length + 2
/** The marker with the space before it, as it is taken off the end of a reply. */
const trailingMarker = /\s*NO_REPLY\s*$/

/** A reply that says something to someone: not empty, not NO_REPLY (the turn's `delivered`, a leftover's reply). */
export const isDeliverable = (reply: string): boolean => reply.trim() !== "" && !isNoReply(reply)

/** A reply as it may be shown or sent: a trailing NO_REPLY marker removed (what is left may be empty). */
export const withoutNoReply = (reply: string): string => isNoReply(reply) ? reply.replace(trailingMarker, "") : reply

/**
 * Streams a reply's text while keeping a trailing `NO_REPLY` from ever being shown: the last few characters are
 * held until the turn ends, then shown unless they are the marker. State is per turn (one filter per reply).
 */
export const makeReplyFilter = () => {
  let held = ""
  return {
    /** The part of the text that can be shown now. */
    push: (delta: string): string => {
      held += delta
      if (held.length <= holdBack) return ""
      const shown = held.slice(0, held.length - holdBack)
      held = held.slice(held.length - holdBack)
      return shown
    },
    /**
     * What is held, once a tool call follows the text: that text is not the turn's reply, so it is shown now, before
     * the call (a trailing marker still never is).
     */
    flush: (): string => {
      const rest = held.replace(marker, "$1")
      held = ""
      return rest
    },
    /** What is left to show when the turn ends with `reply`. */
    end: (reply: string): string => {
      const rest = isNoReply(reply) ? held.replace(trailingMarker, "") : held
      held = ""
      return rest
    }
  }
}

/**
 * The turn's events with the NO_REPLY marker taken out at the source, so no consumer (terminal, web, SSE, Telegram,
 * Slack, `kern chat`, `--json`) filters it: streamed text holds back a possible marker prefix until the next tool call
 * or the turn's end, and `finish` carries the reply without the marker (`delivered` false says nothing is to be sent).
 */
export const noReplyEmit = (emit: (event: TurnEvent) => Effect.Effect<void>): (event: TurnEvent) => Effect.Effect<void> => {
  const filter = makeReplyFilter()
  // What was held back goes out as the text of the turn of the event that lets it go.
  const text = (ids: TurnIds, delta: string) => delta === "" ? Effect.void : emit({ type: "text-delta", ...idsOf(ids), delta })
  return (event) =>
    Effect.suspend(() => {
      switch (event.type) {
        case "text-delta":
          return text(event, filter.push(event.delta))
        // A tool call follows the text; or the turn ended without its answer (a stop): what it had said goes out first.
        case "tool-call":
        case "error":
          return Effect.zipRight(text(event, filter.flush()), emit(event))
        case "finish":
          return Effect.zipRight(text(event, filter.end(event.reply)), emit({ ...event, reply: withoutNoReply(event.reply) }))
        default:
          return emit(event)
      }
    })
}
