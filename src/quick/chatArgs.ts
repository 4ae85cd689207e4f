// The `kern chat` command lines the quick paths take for sure (src/quick/chat.ts, chatLocal.ts, chatProbe.ts): plain
// code, no Effect, so the probe that decides which bundle runs a chat stays small.
import type { ChatArgs } from "../cli/chatRemote.js"

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
