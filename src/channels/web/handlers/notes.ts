import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option } from "effect"
import * as NodePath from "node:path"
import { AgentConfig } from "../../../config/AgentConfig.js"
import { NotesSummary } from "../../../memory/NotesSummary.js"
import { listNotes } from "../../../memory/notes.js"
import { readAgentText } from "../../../storage/agentFiles.js"
import { serverError } from "../ApiError.js"
import { KernApi } from "../KernApi.js"

type Summary = Option.Option<{ readonly text: string; readonly sources: ReadonlyArray<string>; readonly fresh: boolean }>

const answer = (summary: Summary) => ({ summary: Option.getOrNull(summary) })

/** The daily notes GET /notes answers with: the latest week's. */
export const dailyNotesShown = 7

/** The notes summary, regenerating it with the model, and the latest daily notes. */
export const layer = HttpApiBuilder.group(KernApi, "notes", (handlers) =>
  Effect.gen(function*() {
    const summaries = yield* NotesSummary
    const { paths } = yield* AgentConfig
    // Through the door, as the prompt reads them: a note that links into .kern/ or out of the folder is left out.
    const readNote = (name: string) =>
      readAgentText(NodePath.join("notes", name), { roots: [paths.dir] }).pipe(
        Effect.map((text) => [{ path: `notes/${name}`, date: name.slice(0, 10), text }]),
        Effect.catchAll((error) => Effect.as(Effect.logWarning(`kern: GET /notes left out notes/${name}: ${error.message}`), []))
      )
    const daily = Effect.gen(function*() {
      const names = yield* listNotes(paths.dir).pipe(Effect.mapError(serverError))
      const latest = names.slice(-dailyNotesShown).reverse()
      const notes = (yield* Effect.forEach(latest, readNote)).flat()
      return { notes, total: names.length }
    }).pipe(Effect.withSpan("kern.web.notes.daily"))
    return handlers
      .handle("summary", () => Effect.map(summaries.current, answer))
      .handle("regenerate", () => Effect.map(summaries.regenerate, answer))
      .handle("daily", () => daily)
  }))
