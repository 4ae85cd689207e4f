import { type DateTime, Effect } from "effect"
import * as NodeReadline from "node:readline"
import type { PendingApprovalInfo } from "../channels/AgentEvent.js"
import { argsText, formatApprovalResolved } from "../channels/approvalPrompt.js"
import { neutralizeControls } from "../channels/terminalSafe.js"
import { localIso } from "../session/envelope.js"

/**
 * How `kern chat` answers an approval its turn waits for: `inline` asks y/n on the terminal; `commands` names the
 * `kern approve` / `kern deny` commands (the agent runs and serves them); `nobody` says that nothing here can answer
 * (no terminal, and the turn runs in this process, which serves no HTTP API).
 */
export type ChatAnswering = "inline" | "commands" | "nobody"

/** What waits, its id, and how to answer it: for stderr, control characters shown, not obeyed. */
export const chatApprovalNotice = (info: PendingApprovalInfo, answering: ChatAnswering, zone: DateTime.TimeZone): string => {
  const expires = localIso(Date.parse(info.expiresAt), zone).slice(11, 19)
  const how = answering === "inline"
    ? `   answer y or n here; denied at ${expires} without an answer`
    : answering === "commands"
    ? `   answer with: kern approve ${info.id}   or: kern deny ${info.id}   (denied at ${expires} without an answer)`
    : `   nobody can answer it here (no terminal); it is denied at ${expires}. To answer approvals from another shell, run the agent (kern start) and use kern approve / kern deny`
  return neutralizeControls([
    "",
    `kern: approval ${info.id}: ${info.toolId} waits for your yes (${info.reason})`,
    ...argsText(info.args).split("\n").map((line) => `   ${line}`),
    how,
    ""
  ].join("\n"))
}

export const chatApprovalResolved = (resolved: { readonly id: string; readonly outcome: string; readonly by: string }) =>
  `kern: ${formatApprovalResolved(resolved).replace(/^\u2500\u2500 /, "")}`

/** `y`/`yes` approve, `n`/`no` deny; anything else asks again. */
export const parseYesNo = (line: string): boolean | undefined => {
  const text = line.trim().toLowerCase()
  return text === "y" || text === "yes" ? true : text === "n" || text === "no" ? false : undefined
}

/**
 * Asks y/n on the terminal (stdin and stderr) until answered; an approval answered elsewhere meanwhile interrupts
 * this (the readline interface is closed with its scope).
 */
export const askInline = (id: string): Effect.Effect<boolean> =>
  Effect.scoped(Effect.gen(function*() {
    const rl = yield* Effect.acquireRelease(
      Effect.sync(() => NodeReadline.createInterface({ input: process.stdin, output: process.stderr, terminal: true })),
      (rl) => Effect.sync(() => rl.close())
    )
    const ask = Effect.async<boolean | undefined>((resume) => {
      rl.question(`approve ${id}? (y/n) `, (line) => resume(Effect.succeed(parseYesNo(line))))
    })
    return yield* ask.pipe(
      Effect.repeat({ until: (answer): answer is boolean => answer !== undefined }),
      Effect.map((answer) => answer === true)
    )
  }))
