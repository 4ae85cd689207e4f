// `kern chat -m TEXT` through a running agent, from a bundle of its own (dist/quickChat.cjs, loaded by bin/kern.js with
// a V8 code cache): the HTTP client and the event printer of src/cli/chatRemote.ts, without the runtime the full CLI
// loads (tokenizers, provider SDKs, SQLite). When no agent serves the folder, or the command line is one it does not
// know for sure, it hands over to the full CLI, which runs the turn itself or explains the mistake.
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { type ChatArgs, chatThroughRunning } from "../cli/chatRemote.js"
import { reduceEnvironment } from "../cli/privateEnvironment.js"
import { type Outcome, runQuick } from "./runQuick.js"

/** The value for a flag that takes one, when there is one that is not itself a flag. */
const valueAt = (argv: ReadonlyArray<string>, i: number): string | undefined => {
  const value = argv[i + 1]
  return value === undefined || value === "" || value.startsWith("-") ? undefined : value
}

/**
 * The arguments after `chat` when they are `[dir] [--dir <dir>] -m|--message <text> [--json] [--new] [--wait <s>]` in
 * any order, each once, one folder; otherwise none (the full CLI parses and explains the rest).
 */
export const parseChatArgs = (argv: ReadonlyArray<string>): ChatArgs | undefined => {
  let dir: string | undefined
  let dirFlag: string | undefined
  let message: string | undefined
  let json = false
  let newSession = false
  let wait: number | undefined
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    const value = valueAt(argv, i)
    if (arg === "--json" && !json) json = true
    else if (arg === "--new" && !newSession) newSession = true
    else if ((arg === "-m" || arg === "--message") && message === undefined && value !== undefined) {
      message = value
      i++
    } else if (arg === "--dir" && dirFlag === undefined && value !== undefined) {
      dirFlag = value
      i++
    } else if (arg === "--wait" && wait === undefined && value !== undefined && /^[0-9]{1,6}$/.test(value)) {
      wait = Number(value)
      i++
    } else if (arg !== "" && !arg.startsWith("-") && dir === undefined) dir = arg
    else return undefined
  }
  if (message === undefined) return undefined
  if (dir !== undefined && dirFlag !== undefined && dir !== dirFlag) return undefined
  return { dir: dir ?? dirFlag ?? ".", message, files: [], json, newSession, wait: wait ?? 60 }
}

const chat = (args: ChatArgs) =>
  chatThroughRunning(args).pipe(
    Effect.flatMap(({ remote }) => Option.match(remote, {
      // No agent serves the folder: the turn runs in this process (src/quick/chatLocal.ts).
      onNone: () => Effect.succeed<Outcome>("local"),
      onSome: (turn) =>
        // From here on this process only talks to the agent: it keeps its environment in memory only, as a chat does.
        Effect.zipRight(Effect.sync(() => reduceEnvironment(process.env)), Effect.as(turn, 0))
    })),
    // node's http module, as `kern status` does: node's own fetch (undici inside node) adds ~40 MiB to the process's
    // peak RSS on its first call, half of what a chat holds.
    Effect.provide(NodeHttpClient.layer)
  )

/**
 * Runs `kern <argv>` when it is a chat this bundle can parse, and says whether it took it; the process exits when the
 * chat ends. When no agent serves the folder, `local` runs the turn in this process (dist/quickChatLocal.cjs), or
 * `full` starts the full CLI on the same command line when it is not given.
 */
export const run = (argv: ReadonlyArray<string>, full: () => void, local: () => void = full): boolean => {
  if (argv[0] !== "chat") return false
  const args = parseChatArgs(argv.slice(1))
  if (args === undefined) return false
  runQuick(chat(args), full, local)
  return true
}
