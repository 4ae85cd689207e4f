import type { ContextSegmentsResponse } from "../../api.js"
import { Bar } from "./Bars.js"

const n = (x: number) => x.toLocaleString()

/**
 * The next request's tokens by part, each bar against maxContextTokens so that the bars add up to the total one; the
 * summary and raw parts say their own budget too, since either may overshoot it (raw waits for the summarizer).
 */
export const TokenBreakdown = ({ context }: { readonly context: ContextSegmentsResponse }) => {
  const max = context.budget.maxContextTokens
  const rows: ReadonlyArray<readonly [string, number, number | undefined]> = [
    ["system", context.tokens.system, undefined],
    ["tools", context.tokens.tools, undefined],
    ["summary", context.tokens.summary, context.budget.summary],
    ["raw", context.tokens.raw, context.budget.raw]
  ]
  const share = max <= 0 ? 0 : Math.round((context.tokens.total / max) * 100)
  return (
    <dl class="roles token-breakdown">
      {rows.map(([part, tokens, budget]) => (
        <div key={part} class="role-row">
          <dt>{part}</dt>
          <dd>
            <Bar value={tokens} max={max} label={`${part}: ${n(tokens)} of ${n(max)} tokens`} />
            <span>
              {n(tokens)}
              {budget !== undefined && <span class="muted">{` of ${n(budget)} allowed`}</span>}
            </span>
          </dd>
        </div>
      ))}
      <div class={context.tokens.total > max ? "role-row token-total over" : "role-row token-total"}>
        <dt>total</dt>
        <dd>
          <Bar value={context.tokens.total} max={max} label={`total: ${n(context.tokens.total)} of ${n(max)} tokens`} />
          <span>{`${n(context.tokens.total)} of ${n(max)} (${share}%)`}</span>
        </dd>
      </div>
    </dl>
  )
}
