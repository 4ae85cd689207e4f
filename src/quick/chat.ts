// `kern chat -m TEXT` through a running agent, from a bundle of its own (dist/quickChat.cjs, loaded by bin/kern.js with
// a V8 code cache): the HTTP client and the event printer of src/cli/chatRemote.ts, without the runtime the full CLI
// loads (tokenizers, provider SDKs, SQLite). When no agent serves the folder it hands over to the turn's own bundle
// (src/quick/chatLocal.ts); a command line it does not know for sure goes to the full CLI, which explains the mistake.
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { type ChatArgs, chatThroughRunning } from "../cli/chatRemote.js"
import { reduceEnvironment } from "../cli/privateEnvironment.js"
import { parseChatArgs } from "./chatArgs.js"
import { type Outcome, runQuick } from "./runQuick.js"

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
