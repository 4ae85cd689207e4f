import { FileSystem } from "@effect/platform"
import { Effect, Option } from "effect"
import * as NodePath from "node:path"
import type { LoadedConfig } from "../config/AgentConfig.js"
import * as HostedMark from "../storage/HostedMark.js"
import { type HostFiles, hostFiles } from "../storage/hostFiles.js"
import * as LockFile from "../storage/LockFile.js"
import { CommandFailed } from "./errors.js"
import type { LogLine } from "./logRecord.js"

/**
 * `--host [DIR]`: the host's files, DIR being its home (host.json's folder, or serve's `--home`) or its host.json.
 * A folder no `kern serve` has used (no `.kern-host/`) is refused, saying where the home is.
 */
export const hostHomeOf = (dir: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const resolved = NodePath.resolve(dir)
    const info = yield* fs.stat(resolved).pipe(Effect.option)
    const home = Option.isSome(info) && info.value.type === "File" ? NodePath.dirname(resolved) : resolved
    const files = hostFiles(home)
    if (!(yield* fs.exists(files.dir).pipe(Effect.orElseSucceed(() => false)))) {
      return yield* new CommandFailed({
        message: `${home} is no kern serve home (no .kern-host/ there): give the folder of its host.json, or the --home it runs with`
      })
    }
    return files
  })

/** The host a folder's agent belongs to: its name there, the host's files, and the host's process while it runs. */
export interface HostedBy {
  readonly name: string
  readonly files: HostFiles
  readonly holder: Option.Option<LockFile.LockHolder>
}

/** The host the folder's mark names (src/storage/HostedMark.ts), running or not; none for a folder no host has. */
export const hostedBy = (loaded: LoadedConfig) =>
  Effect.map(HostedMark.hostOf(loaded.paths.kernDir), Option.map((found): HostedBy => ({
    name: found.mark.name,
    files: hostFiles(found.mark.home),
    holder: found.holder
  })))

/** A hosted agent's lines of its host's log: those annotated with its name. */
export const agentLines = (name: string) => (line: LogLine): boolean => line.record.annotations["agent"] === name
