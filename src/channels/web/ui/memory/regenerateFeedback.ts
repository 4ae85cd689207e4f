// What the Notes tab says after Regenerate: pure, so each outcome's wording is unit-tested under Node.
import type { Loaded } from "../http.js"
import type { Summary } from "./responses.js"

export interface Feedback {
  readonly text: string
  readonly failed: boolean
}

/** `notes`: how many daily notes there are (the summary covers the ones before the latest); `at`: when it answered. */
export const regenerateFeedback = (
  answer: Loaded<{ readonly summary: Summary | null }>,
  notes: number | undefined,
  at: string
): Feedback => {
  if (answer._tag === "NotBuilt") return { text: "Regenerating is not built in this server yet.", failed: true }
  if (answer._tag === "Failed") return { text: `Could not regenerate: ${answer.message}`, failed: true }
  const summary = answer.value.summary
  if (summary === null) {
    const have = notes === undefined ? "" : notes === 1 ? " There is one daily note (shown below)." : notes === 0 ? " There are no daily notes yet." : ""
    return {
      text: `Nothing to summarize yet: the summary covers the daily notes before the latest one.${have}`,
      failed: false
    }
  }
  return summary.fresh
    ? { text: `Regenerated at ${at} from ${summary.sources.length} ${summary.sources.length === 1 ? "note" : "notes"}.`, failed: false }
    : { text: "The summary model made no new summary (the agent's log says why); the last one is shown.", failed: true }
}
