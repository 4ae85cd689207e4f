import { Duration, Effect, Option, Schedule, Schema, Stream } from "effect"
import { type AgentEvent, AgentEventJson } from "./api.js"
import type { EventHub } from "./EventHub.js"
import { sseEventName } from "./sseEventName.js"

/** A comment line every so often keeps proxies and browsers from closing an idle stream. */
export const keepaliveInterval = Duration.seconds(15)

export const keepaliveFrame = ": keepalive\n\n"

/** Sent first, so a client knows it is subscribed (a message it posts after this will be seen). */
export const openFrame = ": connected\n\n"

const encodeEvent = Schema.encodeSync(AgentEventJson)

/**
 * One event as an SSE frame, named for its type (sseEventName: never `error`, which browsers take for a broken
 * connection); a reset carries no id, so the client's Last-Event-ID stays where it was.
 */
export const eventFrame = (event: AgentEvent): string =>
  `${event.type === "reset" ? "" : `id: ${event.seq}\n`}event: ${sseEventName(event.type)}\ndata: ${encodeEvent(event)}\n\n`

/** Last-Event-ID as the browser sends it: a sequence number, or nothing usable. */
export const parseLastEventId = (header: string | undefined): Option.Option<number> =>
  header !== undefined && /^\d{1,16}$/.test(header.trim()) ? Option.some(Number(header.trim())) : Option.none()

const webLog = (line: string) => Effect.logDebug(line).pipe(Effect.annotateLogs({ channel: "web" }))

const resumed = (lastId: Option.Option<number>) => Option.match(lastId, { onNone: () => "", onSome: (id) => ` (resuming after event ${id})` })

/**
 * The SSE body for one client: what it missed, then live events, with keepalive comments on the Clock. Its connect
 * and its end are debug lines (a browser tab comes and goes often).
 */
export const sseFrames = (hub: EventHub, lastId: Option.Option<number>) =>
  Effect.map(hub.subscribe(lastId), (events) =>
    Stream.concat(
      Stream.make(openFrame),
      Stream.merge(
        Stream.map(events, eventFrame),
        Stream.fromSchedule(Schedule.spaced(keepaliveInterval)).pipe(Stream.as(keepaliveFrame)),
        { haltStrategy: "left" }
      )
    ).pipe(Stream.ensuring(webLog("web: an event stream client left")))).pipe(
      Effect.tap(() => webLog(`web: an event stream client connected${resumed(lastId)}`))
    )
