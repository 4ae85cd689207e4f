// `kern chat -m TEXT` when no agent serves the folder: the turn in this process, run as the full CLI runs the chat
// command (src/main.ts, src/cli/program.ts), from a CommonJS bundle of its own (dist/quickChatLocal.cjs) that
// bin/kern.js loads with a V8 code cache. Node 20 keeps no code cache for ES modules: compiling the ~100 chunks of
// main.js a chat needs took ~0.45 s of CPU at every one-shot chat, and @effect/cli's parser ~0.1 s more. The chat
// client (src/quick/chat.ts) hands over here only a command line it parsed for sure; anything else goes to the full CLI.
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeTerminal from "@effect/platform-node/NodeTerminal"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { run as chat } from "../cli/chat.js"
import { outputClosed } from "../cli/closedOutput.js"
import { failureReport } from "../cli/errors.js"
import { withForegroundLogging } from "../cli/foregroundLogger.js"
import { reduceEnvironment } from "../cli/privateEnvironment.js"
import { exitCodeTeardown } from "../cli/teardown.js"
import { ProcessEnv } from "../config/ProcessEnv.js"
import { parseChatArgs } from "./chatArgs.js"

/**
 * Runs `kern <argv>` (a chat parseChatArgs reads, with something to send) as the process and says whether it took it:
 * the environment kept in memory only (a command that runs tools), its failure one line on stderr with its exit code,
 * warnings on stderr, a closed stdout ending it quietly, as src/main.ts runs it.
 */
export const run = (argv: ReadonlyArray<string>): boolean => {
  const args = argv[0] === "chat" ? parseChatArgs(argv.slice(1)) : undefined
  // An empty message is a usage mistake, whose usage line only the full CLI prints.
  if (args === undefined || args.message.trim() === "") return false
  const { inherited } = reduceEnvironment(process.env)
  const program = chat(args).pipe(
    Effect.as(0),
    Effect.catchAll((error) => {
      const { code, line } = failureReport(error)
      return Effect.as(Console.error(line), code)
    }),
    withForegroundLogging,
    Effect.raceFirst(outputClosed([process.stdout, process.stderr])),
    Effect.provideService(ProcessEnv, inherited),
    Effect.provide(Layer.mergeAll(NodeFileSystem.layer, NodePath.layer, NodeTerminal.layer))
  )
  NodeRuntime.runMain(program, { teardown: exitCodeTeardown(130) })
  return true
}
