// Charts as SVG rectangles sized by attributes: the CSP forbids inline styles, and attributes are not styles.

/** A horizontal bar filled to `value / max`. */
export const Bar = ({ value, max, label }: { readonly value: number; readonly max: number; readonly label: string }) => {
  const width = max <= 0 ? 0 : Math.max(0.5, Math.min(100, (value / max) * 100))
  return (
    <svg class="bar" viewBox="0 0 100 8" preserveAspectRatio="none" role="img" aria-label={label}>
      <rect class="bar-track" x="0" y="0" width="100" height="8" />
      <rect class="bar-fill" x="0" y="0" width={width} height="8" />
    </svg>
  )
}

/** Vertical bars, one per entry, labelled underneath every `labelEvery` entries. */
export const Columns = (
  { entries, label, labelEvery = 1 }: {
    readonly entries: ReadonlyArray<{ readonly label: string; readonly count: number }>
    readonly label: string
    readonly labelEvery?: number
  }
) => {
  const max = Math.max(1, ...entries.map((e) => e.count))
  const step = 10
  // At least a dozen slots wide, so that two days of activity are two bars, not two walls.
  const width = Math.max(entries.length, 12) * step
  // A label is about 3 units a character at the labels' 5px: wider than its slot, it labels only every other (or
  // every third…) slot, so neighbours never print over each other ("11-2211-23").
  const longest = Math.max(0, ...entries.map((e) => e.label.length))
  const every = Math.max(labelEvery, Math.ceil((longest * 3 + 2) / step))
  return (
    <svg class="columns" viewBox={`0 0 ${width} 60`} role="img" aria-label={label}>
      {entries.map((e, i) => {
        const h = (e.count / max) * 44
        return (
          <g key={e.label}>
            <rect class="col" x={i * step + 1} y={46 - h} width={step - 2} height={Math.max(h, e.count > 0 ? 1 : 0)}>
              <title>{`${e.label}: ${e.count}`}</title>
            </rect>
            {i % every === 0 && <text class="col-label" x={i * step + step / 2} y="57" text-anchor="middle">{e.label}</text>}
          </g>
        )
      })}
    </svg>
  )
}
