import { Effect } from "effect"
import type { KnownSecret } from "../config/KnownSecrets.js"
import { makeStreamRedactor, redactSecrets } from "../kernel/secretGuard.js"
import { idsOf, type TurnEvent, type TurnIds } from "./TurnEvent.js"

/**
 * The turn's events with every known secret replaced by `[redacted:NAME]`: every client (terminal, web, Telegram,
 * Slack, `--json`) follows a turn through them. Streamed text goes through one stream redactor, so a secret the model
 * writes over several deltas is replaced whole and no prefix of it is shown; what it holds back goes out before the
 * next event of another kind (a tool call, the step's next `thinking`, `finish`).
 */
export const redactingEmit = (
  emit: (event: TurnEvent) => Effect.Effect<void>,
  secrets: ReadonlyArray<KnownSecret>
): (event: TurnEvent) => Effect.Effect<void> => {
  if (secrets.length === 0) return emit
  const stream = makeStreamRedactor(secrets)
  // What the redactor held goes out as the text of the turn of the event that lets it go.
  const flush = (ids: TurnIds) =>
    Effect.suspend(() => {
      const rest = stream.flush()
      return rest === "" ? Effect.void : emit({ type: "text-delta", ...idsOf(ids), delta: rest })
    })
  return (event) =>
    Effect.suspend(() => {
      if (event.type === "text-delta") {
        const shown = stream.push(event.delta)
        return shown === "" ? Effect.void : emit({ ...event, delta: shown })
      }
      return Effect.zipRight(flush(event), emit(redactSecrets(event, secrets)))
    })
}
