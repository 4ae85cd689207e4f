import { FileSystem } from "@effect/platform"
import { Effect, Option, Schema } from "effect"
import { LockHolder, replaceWhole } from "./LockFile.js"
import { orIfMissing } from "./missingFile.js"
import { processRunning, readProcessStat } from "./processState.js"

/**
 * `.kern/agent.pid`: the background agent `kern start` launched, recorded as the folder lock records its holder (pid,
 * start time, command, address), so `kern stop` signals that process and no other: after a crash its pid may name an
 * unrelated program, which started at another time. An older kern wrote the bare pid; such a record cannot be
 * checked, and is trusted only where the folder's lock confirms it.
 */

export interface PidRecord {
  readonly pid: number
  /** None for a bare pid (an older kern). */
  readonly holder: Option.Option<LockHolder>
}

const HolderJson = Schema.parseJson(LockHolder)
const BarePid = Schema.NumberFromString.pipe(Schema.int(), Schema.positive())
const encodeHolder = Schema.encodeSync(HolderJson)

/** The record, or none when there is no file or it holds neither form. */
export const read = (file: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const text = (yield* fs.readFileString(file).pipe(orIfMissing(() => ""))).trim()
    const holder = Schema.decodeOption(HolderJson)(text)
    if (Option.isSome(holder)) return Option.some<PidRecord>({ pid: holder.value.pid, holder })
    return Option.map(Schema.decodeOption(BarePid)(text), (pid): PidRecord => ({ pid, holder: Option.none() }))
  }).pipe(Effect.withSpan("kern.storage.PidFile.read"))

/**
 * Writes the record in one step (`kern start` writes it, then the agent its own): `kern stop`, `kern status` and the
 * clients reading it meanwhile find the old record or the new, never an empty file that says no agent runs.
 */
export const write = (file: string, holder: LockHolder) =>
  replaceWhole(file, `${encodeHolder(holder)}\n`).pipe(Effect.withSpan("kern.storage.PidFile.write"))

/** What the recorded pid names now. */
export type Check =
  /** The recorded process: same pid, same start time. */
  | { readonly _tag: "Running"; readonly holder: LockHolder }
  /** No process has the pid (or only a zombie, dead and not yet reaped). */
  | { readonly _tag: "Gone"; readonly pid: number }
  /** Another process has the pid now: it started at another time. */
  | { readonly _tag: "Reused"; readonly pid: number; readonly command: string }
  /** A process has the pid, but the record or the system gives no start time to compare. */
  | { readonly _tag: "Unverified"; readonly pid: number; readonly command: string }

export const check = (record: PidRecord): Effect.Effect<Check> =>
  Effect.sync((): Check => {
    if (!processRunning(record.pid)) return { _tag: "Gone", pid: record.pid }
    const stat = readProcessStat(record.pid)
    const command = stat?.command ?? "unknown"
    const recorded = Option.flatMap(record.holder, (h) => Option.fromNullable(h.processStart))
    if (Option.isNone(recorded) || stat?.start === undefined) return { _tag: "Unverified", pid: record.pid, command }
    return stat.start === recorded.value && Option.isSome(record.holder)
      ? { _tag: "Running", holder: record.holder.value }
      : { _tag: "Reused", pid: record.pid, command }
  })

/** Why a record was not trusted, for `kern stop`. */
export const distrust = (file: string, found: Check): string | undefined => {
  switch (found._tag) {
    case "Reused":
      return `${file} names pid ${found.pid}, but that is now another process (${found.command}, started at another time than the agent); left alone`
    case "Unverified":
      return `${file} names pid ${found.pid} (${found.command}) without a start time to tell it is the agent, and the folder's lock does not name it; left alone`
    default:
      return undefined
  }
}
