// `kern sessions list` is what scripts, prompts and status lines run again and again, so it starts from a bundle of
// its own (dist/quick.cjs, loaded by bin/kern.js with a V8 code cache): the listing and its storage, without the
// command-line framework and every command's definition that the full CLI (dist/main.cjs) evaluates first. It runs the same `list` as
// the full CLI; any argument it does not know (help, an unknown flag) is left to the full CLI, which explains it.
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as NodeJsPath from "node:path"
import { resolveDir } from "./cli/dirs.js"
import { failureReport } from "./cli/errors.js"
import { listing as listingOf, type NamesLoader } from "./cli/sessions.js"
import { exitCodeTeardown } from "./cli/teardown.js"
import { AgentConfig } from "./config/AgentConfig.js"
import { ProcessEnv } from "./config/ProcessEnv.js"
import { keepIn } from "./quick/keptOutputs.js"
import { listWords } from "./quick/sessionsArgs.js"
import { type SessionsAsk, sessionsCacheFile, sessionsKey, steadyForever } from "./quick/sessionsCache.js"
import type { NamesResult } from "./quickNames.js"

interface ListArgs {
  readonly dir: Option.Option<string>
  readonly dirFlag: Option.Option<string>
  readonly json: boolean
  readonly conversation: Option.Option<string>
}

/**
 * The arguments after `sessions list` when they are `[dir] [--dir <dir>] [--json] [--conversation <id>]` in any order
 * (one folder); otherwise none.
 */
export const parseListArgs = (argv: ReadonlyArray<string>): ListArgs | undefined => {
  const words = listWords(argv)
  return words === undefined ? undefined : {
    dir: Option.fromNullable(words.dir),
    dirFlag: Option.fromNullable(words.dirFlag),
    json: words.json,
    conversation: Option.fromNullable(words.conversation)
  }
}

/** What dist/quickNames.cjs (src/quickNames.ts) exports. */
export interface QuickNames {
  readonly pairedUsersIn: (dir: string) => Promise<NamesResult>
}

/** Loads a CommonJS bundle of dist/ by its file name: bin/kern.js's loader (with a V8 code cache), or plain require. */
export type LoadBundle = (file: string) => QuickNames

/** dist/quickNames.cjs beside this bundle, loaded only when a listing needs the users' names. */
const namesFrom = (load: LoadBundle): NamesLoader =>
  Effect.flatMap(AgentConfig, ({ paths }) =>
    Effect.tryPromise({
      try: () => load(NodeJsPath.join(__dirname, "quickNames.cjs")).pairedUsersIn(paths.dir),
      catch: (error) => ({ message: `dist/quickNames.cjs could not be loaded: ${String(error)}` })
    }).pipe(Effect.flatMap((result) => "error" in result ? Effect.fail({ message: result.error }) : Effect.succeed(result.users))))

/**
 * The listing, printed, and kept for the next ask (src/quick/sessionsCache.ts) when the folder was the same before
 * and after it was made and nothing was logged as a warning meanwhile (the names' warning is for a listing that is
 * never kept: one with somebody else's session). Run from the sources, nothing is kept.
 */
const listing = (args: ListArgs, load: LoadBundle) =>
  resolveDir(args.dir, args.dirFlag).pipe(
    Effect.flatMap((dir) => {
      const ask: SessionsAsk | undefined = typeof __filename !== "string" ? undefined : {
        dir,
        json: args.json,
        conversation: Option.getOrUndefined(args.conversation),
        env: process.env,
        bundle: __filename
      }
      let quiet = true
      const warned = Logger.add(Logger.make(({ logLevel }) => {
        if (LogLevel.greaterThanEqual(logLevel, LogLevel.Warning)) quiet = false
      }))
      const before = ask === undefined ? undefined : sessionsKey(ask)
      return listingOf({ dir, json: args.json, conversation: args.conversation }, namesFrom(load)).pipe(
        Effect.tap(Console.log),
        Effect.tap((stdout) =>
          Effect.sync(() => {
            if (ask !== undefined && quiet) {
              keepIn(sessionsCacheFile(dir), before, sessionsKey(ask), { stdout, failure: null, steadyUntilMs: steadyForever }, Date.now())
            }
          })
        ),
        Effect.provide(warned)
      )
    }),
    Effect.as(0),
    Effect.catchAll((error) => {
      const { code, line } = failureReport(error)
      return Effect.as(Console.error(line), code)
    }),
    Effect.provideService(ProcessEnv, process.env),
    Effect.provide(Layer.mergeAll(NodeFileSystem.layer, NodePath.layer))
  )

/**
 * Runs `kern <argv>` when it is a sessions listing this bundle can answer, and says whether it took it; the process
 * exits when the listing ends. `load` loads the names' bundle (bin/kern.js gives its loader with a code cache).
 */
export const run = (argv: ReadonlyArray<string>, load: LoadBundle = require): boolean => {
  if (argv[0] !== "sessions" || argv[1] !== "list") return false
  const args = parseListArgs(argv.slice(2))
  if (args === undefined) return false
  NodeRuntime.runMain(listing(args, load), { teardown: exitCodeTeardown(130) })
  return true
}
