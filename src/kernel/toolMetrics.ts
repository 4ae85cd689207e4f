import { Metric, MetricBoundaries, MetricLabel } from "effect"

/** Calls by tool and status (`OK` or the error code). */
export const toolCalls = Metric.counter("kern_tool_calls_total", { description: "tool calls by tool and status" })
/** Latency of the calls that ran, by tool. */
export const toolLatency = Metric.histogram(
  "kern_tool_latency_ms",
  MetricBoundaries.exponential({ start: 1, factor: 2, count: 18 }),
  "tool call latency in milliseconds"
)

type Labels = ReadonlyArray<MetricLabel.MetricLabel>

/**
 * The executor's metrics: calls by tool and status, a latency histogram by tool.
 *
 * Effect finds a metric's hook by the identity of its label array, and `Metric.tagged` builds a fresh array on
 * every update (a registry lookup that hashes and compares the key each time). So the label arrays are made once
 * per tool and status and passed as they are; labels a caller adds with `Effect.tagMetrics` are still honoured.
 */
export const makeToolMetrics = () => {
  const byTool = new Map<string, { readonly latency: Labels; readonly calls: Map<string, Labels> }>()
  const labelsOf = (toolId: string) => {
    let labels = byTool.get(toolId)
    if (labels === undefined) {
      labels = { latency: [MetricLabel.make("tool", toolId)], calls: new Map() }
      byTool.set(toolId, labels)
    }
    return labels
  }
  const callLabels = (toolId: string, status: string) => {
    const { calls } = labelsOf(toolId)
    let labels = calls.get(status)
    if (labels === undefined) {
      labels = [MetricLabel.make("tool", toolId), MetricLabel.make("status", status)]
      calls.set(status, labels)
    }
    return labels
  }
  const withFiberLabels = (own: Labels, fiber: Labels): Labels => (fiber.length === 0 ? own : [...fiber, ...own])

  /**
   * Counts one call with its status; the latency too when the call ran. The caller passes its fiber's metric labels
   * (`fiber.getFiberRef(FiberRef.currentMetricLabels)`): it runs already, so the count takes no Effect step.
   */
  const recordCall = (fiberLabels: Labels, toolId: string, status: string, latencyMs?: number) => {
    toolCalls.unsafeUpdate(1, withFiberLabels(callLabels(toolId, status), fiberLabels))
    if (latencyMs !== undefined) {
      toolLatency.unsafeUpdate(latencyMs, withFiberLabels(labelsOf(toolId).latency, fiberLabels))
    }
  }
  return { recordCall }
}
