import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option } from "effect"
import { NotesSummary } from "../../../memory/NotesSummary.js"
import { KernApi } from "../KernApi.js"

type Summary = Option.Option<{ readonly text: string; readonly sources: ReadonlyArray<string>; readonly fresh: boolean }>

const answer = (summary: Summary) => ({ summary: Option.getOrNull(summary) })

/** The notes summary, and regenerating it with the model. */
export const layer = HttpApiBuilder.group(KernApi, "notes", (handlers) =>
  Effect.gen(function*() {
    const summaries = yield* NotesSummary
    return handlers
      .handle("summary", () => Effect.map(summaries.current, answer))
      .handle("regenerate", () => Effect.map(summaries.regenerate, answer))
  }))
