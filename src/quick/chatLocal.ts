// `kern chat -m TEXT` when no agent serves the folder: the turn in this process, run as the full CLI runs the chat
// command (src/main.ts, src/cli/program.ts), from a CommonJS bundle of its own (dist/quickChatLocal.cjs) that
// bin/kern.js loads with a V8 code cache, as it loads the full CLI (dist/main.cjs). It leaves out the command-line
// framework and the other commands (@effect/cli's parser alone cost a one-shot chat ~0.1 s of CPU). The chat
// client (src/quick/chat.ts) hands over here only a command line it parsed for sure; anything else goes to the full CLI.
import * as NodeTerminal from "@effect/platform-node/NodeTerminal"
import * as Effect from "effect/Effect"
import { run as chat } from "../cli/chat.js"
import { reduceEnvironment } from "../cli/privateEnvironment.js"
import { parseChatArgs } from "./chatArgs.js"
import { runQuick } from "./runQuick.js"

/**
 * Runs `kern <argv>` (a chat parseChatArgs reads, with something to send) as the process and says whether it took it,
 * as src/main.ts runs it, through what the quick bundles share (runQuick.ts): the environment kept in memory only (a
 * command that runs tools), its failure one line on stderr with its exit code, warnings on stderr, a closed stdout
 * ending it quietly; `full` starts the full CLI for a usage mistake, which adds the usage line.
 */
export const run = (argv: ReadonlyArray<string>, full: () => void): boolean => {
  const args = argv[0] === "chat" ? parseChatArgs(argv.slice(1)) : undefined
  // An empty message is a usage mistake, whose usage line only the full CLI prints.
  if (args === undefined || args.message.trim() === "") return false
  const { inherited } = reduceEnvironment(process.env)
  runQuick(chat(args).pipe(Effect.as(0), Effect.provide(NodeTerminal.layer)), full, full, inherited)
  return true
}
