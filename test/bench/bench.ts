/** One benchmark: `run` returns samples in `unit`, and optionally baseline samples measured in the same run. */
export interface Bench {
  readonly name: string
  readonly unit: string
  readonly run: () => Promise<{ readonly samples: ReadonlyArray<number>; readonly baseline?: ReadonlyArray<number> }>
}

export interface BenchResult {
  readonly name: string
  readonly unit: string
  readonly median: number
  readonly p95: number
  readonly n: number
  readonly baseline?: number
  readonly ratio?: number
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

export const summarize = (
  name: string,
  unit: string,
  samples: ReadonlyArray<number>,
  baseline?: ReadonlyArray<number>
): BenchResult => {
  const sorted = [...samples].sort((a, b) => a - b)
  const result = { name, unit, median: median(sorted), p95: quantile(sorted, 0.95), n: sorted.length }
  if (baseline === undefined || baseline.length === 0) return result
  const base = median(baseline)
  return { ...result, baseline: base, ratio: base === 0 ? Number.NaN : result.median / base }
}
