import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { UsageError } from "./errors.js"

/** The folder a command works on: the positional `[dir]` or `--dir`, not both; the current folder by default. */
export const resolveDir = (positional: Option.Option<string>, flag: Option.Option<string>): Effect.Effect<string, UsageError> =>
  Option.isSome(positional) && Option.isSome(flag) && positional.value !== flag.value
    ? Effect.fail(new UsageError({ message: `two folders given: "${positional.value}" and --dir "${flag.value}"` }))
    : Effect.succeed(Option.getOrElse(Option.orElse(positional, () => flag), () => "."))

/** Like resolveDir, for commands that must be told where (`kern init` never defaults to the current folder). */
export const requireDir = (positional: Option.Option<string>, flag: Option.Option<string>) =>
  Option.isNone(positional) && Option.isNone(flag)
    ? Effect.fail(new UsageError({ message: "init needs a folder: kern init <dir> (use `kern init .` for this one)" }))
    : resolveDir(positional, flag)

/** A command's arguments with `dir` and `dirFlag` resolved into one folder. */
export const withDir = <T extends { readonly dir: Option.Option<string>; readonly dirFlag: Option.Option<string> }>(
  args: T
) => Effect.map(resolveDir(args.dir, args.dirFlag), (dir) => ({ ...args, dir }))

