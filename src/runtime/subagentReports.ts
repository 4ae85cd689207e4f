import { clip } from "../config/clip.js"
import type { SubAgent } from "../tools/subagents/SubAgentStore.js"

/** Longest task the report's header quotes. */
const taskMax = 80

const header = (row: SubAgent, what: string) => `[sub-agent ${row.id} ${what}: ${clip(row.task.replace(/\s+/g, " ").trim(), taskMax)}]`

/** How a sub-agent ended, as its report says. */
export type Ending =
  | { readonly _tag: "done"; readonly reply: string }
  | { readonly _tag: "failed"; readonly reason: string; readonly reply: string }
  | { readonly _tag: "interrupted" }

/** The message a sub-agent's parent conversation gets when it ends: one line of header, then its answer or why not. */
export const reportOf = (row: SubAgent, ending: Ending): string => {
  switch (ending._tag) {
    case "done":
      return `${header(row, "finished")} ${ending.reply.trim() === "" ? "(it gave no answer)" : ending.reply.trim()}`
    case "failed":
      return `${header(row, "stopped")} ${ending.reason}` +
        (ending.reply.trim() === "" ? "" : `\nWhat it had said: ${ending.reply.trim()}`)
    case "interrupted":
      return `${header(row, "interrupted")} the agent stopped while it worked; it was not resumed. What it did so far ` +
        `is in its conversation subagent-${row.id}.`
  }
}

/** The sub-agent's first message: its task, and what its answer is for. */
export const taskText = (task: string): string =>
  "You are a sub-agent: do the task below with the tools you have. Your final reply is what the turn that started " +
  `you receives, so make it the result itself.\n\nTask: ${task}`
