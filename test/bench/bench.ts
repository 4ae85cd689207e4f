/**
 * A target a benchmark is judged by, as the issue that set it states it. `of` names the figure: the median, the
 * ratio of the median to the baseline's median (the floor or peer measured in the same run), or one of the extra
 * figures the bench reports (`extra.<name>`). Met when the figure is at most `atMost` / at least `atLeast`.
 */
export interface Target {
  readonly of: "median" | "ratio" | `extra.${string}`
  readonly atMost?: number
  readonly atLeast?: number
}

/** What one run of a benchmark measured. */
export interface BenchSamples {
  readonly samples: ReadonlyArray<number>
  /** The floor or peer, measured in the same run, alternating with the samples. */
  readonly baseline?: ReadonlyArray<number>
  /** Figures reported beside the samples (peak RSS, a time measured apart, a quality figure). */
  readonly extra?: Readonly<Record<string, number>>
}

/** One benchmark: `run` returns samples in `unit`, and optionally baseline samples measured in the same run. */
export interface Bench {
  readonly name: string
  readonly unit: string
  /** A throughput: larger is better, and the reported "p95" is the low percentile (95% of samples were at least it). */
  readonly higherIsBetter?: boolean
  /** What the figures must meet; the runner prints met / missed per target. */
  readonly targets?: ReadonlyArray<Target>
  /** The bench runs a built kern (`bin/kern.js`): the runner builds one into a folder of its own first (kernBuild.ts). */
  readonly usesBuild?: boolean
  readonly run: () => Promise<BenchSamples>
}

export interface Verdict {
  readonly target: string
  readonly value: number
  readonly met: boolean
}

export interface BenchResult {
  readonly name: string
  readonly unit: string
  readonly median: number
  readonly p95: number
  readonly n: number
  readonly baseline?: number
  readonly ratio?: number
  readonly extra?: Readonly<Record<string, number>>
  readonly verdicts?: ReadonlyArray<Verdict>
}

const quantile = (sorted: ReadonlyArray<number>, q: number): number => {
  if (sorted.length === 0) return Number.NaN
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))
  return sorted[index] ?? Number.NaN
}

export const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? (sorted[mid] ?? Number.NaN) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2
}

/** How a target reads in the table: `ratio ≤ 2`, `median ≥ 5000`. */
export const describeTarget = (target: Target): string =>
  [
    target.atMost === undefined ? undefined : `${target.of} ≤ ${target.atMost}`,
    target.atLeast === undefined ? undefined : `${target.of} ≥ ${target.atLeast}`
  ].filter((part) => part !== undefined).join(" and ")

const figureOf = (result: Omit<BenchResult, "verdicts">, of: Target["of"]): number | undefined =>
  of === "median" ? result.median : of === "ratio" ? result.ratio : result.extra?.[of.slice("extra.".length)]

/** Judges each target; a figure the run did not produce (no baseline, no such extra) misses. */
export const judge = (result: Omit<BenchResult, "verdicts">, targets: ReadonlyArray<Target>): ReadonlyArray<Verdict> =>
  targets.map((target) => {
    const value = figureOf(result, target.of)
    const met = value !== undefined && Number.isFinite(value) &&
      (target.atMost === undefined || value <= target.atMost) &&
      (target.atLeast === undefined || value >= target.atLeast)
    return { target: describeTarget(target), value: value ?? Number.NaN, met }
  })

export const summarize = (
  bench: Pick<Bench, "name" | "unit" | "higherIsBetter" | "targets">,
  measured: BenchSamples
): BenchResult => {
  const sorted = [...measured.samples].sort((a, b) => a - b)
  const p95 = quantile(sorted, bench.higherIsBetter === true ? 0.05 : 0.95)
  const base: Omit<BenchResult, "verdicts"> = {
    name: bench.name,
    unit: bench.unit,
    median: median(sorted),
    p95,
    n: sorted.length,
    ...(measured.extra === undefined || Object.keys(measured.extra).length === 0 ? {} : { extra: measured.extra })
  }
  const baseline = measured.baseline ?? []
  const withBaseline: Omit<BenchResult, "verdicts"> = baseline.length === 0 ? base : (() => {
    const floor = median(baseline)
    return { ...base, baseline: floor, ratio: floor === 0 ? Number.NaN : base.median / floor }
  })()
  const targets = bench.targets ?? []
  return targets.length === 0 ? withBaseline : { ...withBaseline, verdicts: judge(withBaseline, targets) }
}
