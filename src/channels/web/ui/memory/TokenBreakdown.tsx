import type { Loaded } from "../http.js"
import type { RequestFigures } from "../wire.js"
import { Bar } from "./Bars.js"
import { LoadedView } from "./LoadedView.js"

const n = (x: number) => x.toLocaleString()

/**
 * What the figures are, said as the server labels them: a preview of the next request (before the message that
 * starts its turn), or a request that was sent; an older server does not say, so neither does the heading.
 */
export const requestHeading = (context: Pick<RequestFigures, "request" | "tokens" | "budget">) => {
  const of = `${n(context.tokens.total)} of ${n(context.budget.maxContextTokens)} tokens`
  switch (context.request) {
    case "next":
      return `Next request (before its message): ${of}`
    case "last":
      return `Last request: ${of}`
    default:
      return `Context: ${of}`
  }
}

/** What the tool definitions are: builtin and MCP apart, and what offering MCP tools by name saved. */
export const toolsCostText = (cost: NonNullable<RequestFigures["toolsCost"]>): string =>
  ` (builtin ${n(cost.builtin)}, MCP ${n(cost.mcp)}` +
  (cost.lazyTools === 0 ? ")" : `; ${n(cost.lazyTools)} MCP tools by name, loaded by tool_search: ${n(cost.saved)} saved)`)

/**
 * A request's tokens by part, each bar against maxContextTokens so that the bars add up to the total one; the
 * summary and raw parts say their own budget too, since either may overshoot it (raw waits for the summarizer).
 */
export const TokenBreakdown = ({ context }: { readonly context: RequestFigures }) => {
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
              {part === "tools" && context.toolsCost !== undefined && <span class="muted tools-cost">{toolsCostText(context.toolsCost)}</span>}
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

/** A request's heading and breakdown; an older server without them gets one quiet line, not a second 501 box. */
export const RequestBreakdown = ({ context }: { readonly context: Loaded<RequestFigures> | undefined }) =>
  context?._tag === "NotBuilt"
    ? <p class="muted">This server does not report the context's token breakdown.</p>
    : (
      <LoadedView loaded={context} what="token breakdown">
        {(c) => (
          <>
            <h4>{requestHeading(c)}</h4>
            <TokenBreakdown context={c} />
            {c.leftOut.length === 0 ? null : <p class="muted left-out">Not in these figures: {c.leftOut.join("; ")}.</p>}
          </>
        )}
      </LoadedView>
    )
