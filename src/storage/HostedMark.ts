import { FileSystem } from "@effect/platform"
import { Duration, Effect, Either, Option, Schema } from "effect"
import * as NodePath from "node:path"
import { parseJsonWith } from "../config/json.js"
import { agentNamePattern, hostFiles } from "./hostFiles.js"
import * as LockFile from "./LockFile.js"
import { isNotFound } from "./missingFile.js"

/**
 * `.kern/hosted.json`: which `kern serve` runners host the folder, written by each host when it adds the agent and
 * taken out (its own entry only) when its host.json stops naming it (a host that stops leaves it: the folder is still
 * that host's, asleep). Several runners sharing a folder (on a shared filesystem) each have an entry: one leaving
 * leaves the others. A passive hosted agent holds no lock, so this is how `kern status`, `kern logs` and `kern chat`
 * given the folder find a host: a host's lock (`<home>/.kern-host/host.lock`) says whether it runs and where, and the
 * agent is `/agents/<name>` there. The mark of one host a kern before runners wrote (`{ home, name }`) is read as one
 * entry, and written in the list's form at the next change.
 */
export const HostedMark = Schema.Struct({
  /** The host's home (absolute): where its `.kern-host/` is. */
  home: Schema.String.pipe(Schema.filter((home) => NodePath.isAbsolute(home) || "an absolute folder")),
  /** The agent's name on that host; it goes into a URL, so only a name a host accepts is taken. */
  name: Schema.String.pipe(Schema.pattern(agentNamePattern)),
  /** Where that host listened when it wrote its entry (`http://host:port`), for the reader's information. */
  address: Schema.optional(Schema.String)
})
export type HostedMark = typeof HostedMark.Type

/** The file: every host's entry; or, as one host wrote it before, that host's entry alone. */
const MarkFile = Schema.Union(
  Schema.Struct({ hosts: Schema.Array(HostedMark) }),
  Schema.transform(HostedMark, Schema.Struct({ hosts: Schema.Array(HostedMark) }), {
    strict: true,
    decode: (one) => ({ hosts: [one] }),
    encode: (all) => all.hosts[0]!
  })
)

const MarkJson = parseJsonWith(MarkFile)
const decodeMark = Schema.decodeUnknownEither(MarkJson)
const encodeMark = Schema.encodeSync(parseJsonWith(Schema.Struct({ hosts: Schema.Array(HostedMark) })))

export const markFile = (kernDir: string) => NodePath.join(kernDir, "hosted.json")

/** Taken while a host changes the mark: runners on a shared filesystem change it at once without losing an entry. */
const markLock = (kernDir: string) => NodePath.join(kernDir, "hosted.json.lock")

const sameHost = (a: HostedMark, b: HostedMark) => a.home === b.home && a.name === b.name

/** Every host the folder's mark names, in the order they came; none when there is no mark, or it is not one. */
export const read = (kernDir: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const text = yield* fs.readFileString(markFile(kernDir)).pipe(
      Effect.map(Option.some),
      Effect.catchIf(isNotFound, () => Effect.succeed(Option.none<string>())),
      Effect.orElseSucceed(() => Option.none<string>())
    )
    return Option.match(Option.flatMap(text, (t) => Either.getRight(decodeMark(t))), {
      onNone: (): ReadonlyArray<HostedMark> => [],
      onSome: (mark) => mark.hosts
    })
  })

/** Changes the mark under its lock, in one step (a reader sees the old one or the new one); no entry left, no file. */
const change = (kernDir: string, f: (hosts: ReadonlyArray<HostedMark>) => ReadonlyArray<HostedMark>) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    yield* LockFile.acquire(markLock(kernDir), yield* LockFile.currentHolder("kern serve"), {
      wait: Duration.seconds(10),
      poll: Duration.millis(20)
    })
    const hosts = f(yield* read(kernDir))
    if (hosts.length > 0) return yield* LockFile.replaceWhole(markFile(kernDir), encodeMark({ hosts }))
    yield* fs.remove(markFile(kernDir)).pipe(Effect.catchIf(isNotFound, () => Effect.void))
  }).pipe(Effect.scoped)

/** Adds this host's entry (or brings it up to date), leaving every other host's. */
export const write = (kernDir: string, mark: HostedMark) =>
  change(kernDir, (hosts) => [...hosts.filter((h) => !sameHost(h, mark)), mark])

/** Takes this host's entry out, if there; the others' are left to them. */
export const removeIf = (kernDir: string, mark: HostedMark) => change(kernDir, (hosts) => hosts.filter((h) => !sameHost(h, mark)))

/** A host a folder's mark names: its entry, and the host's live holder (none while that host does not run). */
export interface HostOf {
  readonly mark: HostedMark
  readonly holder: Option.Option<LockFile.LockHolder>
}

export const hostOf = (kernDir: string): Effect.Effect<Option.Option<HostOf>, never, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const hosts = yield* read(kernDir)
    const found = yield* Effect.forEach(hosts, (mark) =>
      Effect.map(
        LockFile.readHolder(hostFiles(mark.home).lockFile).pipe(Effect.orElseSucceed(() => Option.none<LockFile.LockHolder>())),
        (holder): HostOf => ({ mark, holder })
      ))
    // A host that runs (its lock held by a live process); else the latest to mark it, asleep with it.
    return Option.orElse(Option.fromNullable(found.find((h) => Option.isSome(h.holder))), () => Option.fromNullable(found.at(-1)))
  }).pipe(Effect.withSpan("kern.storage.HostedMark.hostOf"))

/** Where a hosted agent is served: `<host address>/agents/<name>`, when its host runs and recorded an address. */
export const agentAddress = (host: HostOf): Option.Option<string> =>
  Option.flatMap(host.holder, (holder) =>
    holder.address === undefined ? Option.none() : Option.some(`${holder.address}/agents/${host.mark.name}`))
