import { FileSystem } from "@effect/platform"
import { Effect, Either, Option, Schema } from "effect"
import * as NodePath from "node:path"
import { parseJsonWith } from "../config/json.js"
import { agentNamePattern, hostFiles } from "./hostFiles.js"
import * as LockFile from "./LockFile.js"
import { isNotFound } from "./missingFile.js"

/**
 * `.kern/hosted.json`: which `kern serve` hosts the folder, written by the host when it adds the agent and removed
 * when host.json stops naming it (a host that stops leaves it: the folder is still that host's, asleep). A passive
 * hosted agent holds no lock, so this is how `kern status`, `kern logs` and `kern chat` given the folder find its host:
 * the host's lock (`<home>/.kern-host/host.lock`) says whether it runs and where, and the agent is `/agents/<name>`
 * there.
 */
export const HostedMark = Schema.Struct({
  /** The host's home (absolute): where its `.kern-host/` is. */
  home: Schema.String.pipe(Schema.filter((home) => NodePath.isAbsolute(home) || "an absolute folder")),
  /** The agent's name on that host; it goes into a URL, so only a name a host accepts is taken. */
  name: Schema.String.pipe(Schema.pattern(agentNamePattern))
})
export type HostedMark = typeof HostedMark.Type

const MarkJson = parseJsonWith(HostedMark)
const decodeMark = Schema.decodeUnknownEither(MarkJson)
const encodeMark = Schema.encodeSync(MarkJson)

export const markFile = (kernDir: string) => NodePath.join(kernDir, "hosted.json")

/** The mark of the folder whose `.kern/` is `kernDir`; none when there is none, or it is not a mark (then ignored). */
export const read = (kernDir: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const text = yield* fs.readFileString(markFile(kernDir)).pipe(
      Effect.map(Option.some),
      Effect.catchIf(isNotFound, () => Effect.succeed(Option.none<string>())),
      Effect.orElseSucceed(() => Option.none<string>())
    )
    return Option.flatMap(text, (t) => Either.getRight(decodeMark(t)))
  })

/** Writes the mark in one step (a reader sees the old one or the new one). */
export const write = (kernDir: string, mark: HostedMark) => LockFile.replaceWhole(markFile(kernDir), encodeMark(mark))

/** Removes the mark if it is still this one (another host's, written since, is left to it). */
export const removeIf = (kernDir: string, mark: HostedMark) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const now = yield* read(kernDir)
    if (Option.isSome(now) && now.value.home === mark.home && now.value.name === mark.name) {
      yield* fs.remove(markFile(kernDir)).pipe(Effect.catchIf(isNotFound, () => Effect.void))
    }
  })

/** The host a folder's mark names: the mark, and the host's live holder (none while that host does not run). */
export interface HostOf {
  readonly mark: HostedMark
  readonly holder: Option.Option<LockFile.LockHolder>
}

export const hostOf = (kernDir: string): Effect.Effect<Option.Option<HostOf>, never, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const mark = yield* read(kernDir)
    if (Option.isNone(mark)) return Option.none()
    const holder = yield* LockFile.readHolder(hostFiles(mark.value.home).lockFile).pipe(
      Effect.orElseSucceed(() => Option.none<LockFile.LockHolder>())
    )
    return Option.some({ mark: mark.value, holder })
  }).pipe(Effect.withSpan("kern.storage.HostedMark.hostOf"))

/** Where a hosted agent is served: `<host address>/agents/<name>`, when its host runs and recorded an address. */
export const agentAddress = (host: HostOf): Option.Option<string> =>
  Option.flatMap(host.holder, (holder) =>
    holder.address === undefined ? Option.none() : Option.some(`${holder.address}/agents/${host.mark.name}`))
