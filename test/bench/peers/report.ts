// What the peers benchmark found, per peer: its runs' figures, or why it could not be measured; and the table it prints.
import { median } from "../bench.js"

/** One run of a peer: `<peer> "hi"` as a whole process, in a fresh project/agent folder. */
export interface RunSample {
  readonly wallMs: number
  readonly rssMiB: number
}

export type PeerResult =
  | {
    readonly _tag: "Measured"
    readonly name: string
    readonly version: string
    /** How the peer was installed, and what had to be done to it (kern's tarball has no build). */
    readonly notes: ReadonlyArray<string>
    readonly installMs: number
    /** The first run after the install: nothing cached yet. */
    readonly cold: RunSample | undefined
    /** The runs after the first. */
    readonly samples: ReadonlyArray<RunSample>
    /** Why each failed run failed (the cold run included). */
    readonly failures: ReadonlyArray<string>
  }
  | { readonly _tag: "Unavailable"; readonly name: string; readonly reason: string }

export interface PeerSummary {
  readonly name: string
  readonly version: string
  readonly n: number
  readonly wallMs: number
  readonly wallMaxMs: number
  readonly rssMiB: number
  readonly rssMaxMiB: number
  readonly coldWallMs: number | undefined
  readonly coldRssMiB: number | undefined
  readonly failures: number
}

export const summarizePeer = (result: Extract<PeerResult, { _tag: "Measured" }>): PeerSummary => {
  const walls = result.samples.map((sample) => sample.wallMs)
  const rss = result.samples.map((sample) => sample.rssMiB)
  return {
    name: result.name,
    version: result.version,
    n: result.samples.length,
    wallMs: median(walls),
    wallMaxMs: walls.length === 0 ? Number.NaN : Math.max(...walls),
    rssMiB: median(rss),
    rssMaxMiB: rss.length === 0 ? Number.NaN : Math.max(...rss),
    coldWallMs: result.cold?.wallMs,
    coldRssMiB: result.cold?.rssMiB,
    failures: result.failures.length
  }
}

const seconds = (ms: number | undefined) => (ms === undefined || !Number.isFinite(ms) ? "-" : (ms / 1000).toFixed(2))
const mib = (value: number | undefined) => (value === undefined || !Number.isFinite(value) ? "-" : value.toFixed(0))
const times = (value: number, of: number | undefined) =>
  of === undefined || !Number.isFinite(value) || !Number.isFinite(of) || of === 0 ? "-" : `${(value / of).toFixed(2)}×`

/**
 * The table: per peer the median and worst of the warm runs (wall time in s, peak RSS of the process tree in MiB),
 * each as a multiple of `reference`'s (kern's) median, and the cold first run; then each peer that failed or could
 * not be measured, with the reason.
 */
export const formatReport = (results: ReadonlyArray<PeerResult>, reference: string): string => {
  const measured = results.flatMap((result) => (result._tag === "Measured" ? [summarizePeer(result)] : []))
  const base = measured.find((summary) => summary.name === reference && summary.n > 0)
  const rows = [
    ["peer", "version", "n", "wall s", "max", `× ${reference}`, "RSS MiB", "max", `× ${reference}`, "cold s", "cold MiB"],
    ...measured.map((s) => [
      s.name,
      s.version,
      String(s.n),
      seconds(s.wallMs),
      seconds(s.wallMaxMs),
      times(s.wallMs, base?.wallMs),
      mib(s.rssMiB),
      mib(s.rssMaxMiB),
      times(s.rssMiB, base?.rssMiB),
      seconds(s.coldWallMs),
      mib(s.coldRssMiB)
    ])
  ]
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)))
  const table = measured.length === 0
    ? ["no peer was measured"]
    : rows.map((row) => row.map((cell, column) => cell.padEnd(widths[column]!)).join("  ").trimEnd())
  const problems = results.flatMap((result) =>
    result._tag === "Unavailable"
      ? [`${result.name}: not measured: ${result.reason}`]
      : result.failures.map((failure, index) => `${result.name}: run failed (${index + 1} of ${result.failures.length}): ${failure}`)
  )
  const notes = results.flatMap((result) => (result._tag === "Measured" ? result.notes.map((note) => `${result.name}: ${note}`) : []))
  return [...table, ...(notes.length > 0 ? ["", ...notes] : []), ...(problems.length > 0 ? ["", ...problems] : [])].join("\n") + "\n"
}
