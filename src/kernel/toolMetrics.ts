import { Metric, MetricBoundaries, MetricLabel } from "effect"

const toolCalls = Metric.counter("kern_tool_calls_total", { description: "tool calls by tool and status" })
const toolLatency = Metric.histogram(
  "kern_tool_latency_ms",
  MetricBoundaries.exponential({ start: 1, factor: 2, count: 18 }),
  "tool call latency in milliseconds"
)

/**
 * The executor's metrics: calls by tool and status, a latency histogram by tool. Tagged metric keys are costly to
 * build (they hash their labels), so each is made once per executor and kept.
 */
export const makeToolMetrics = () => {
  const counters = new Map<string, Metric.Metric.Counter<number>>()
  const histograms = new Map<string, Metric.Metric.Histogram<number>>()
  const countCall = (toolId: string, status: string) => {
    const key = `${toolId}\u0000${status}`
    let counter = counters.get(key)
    if (counter === undefined) {
      counter = Metric.taggedWithLabels(toolCalls, [MetricLabel.make("tool", toolId), MetricLabel.make("status", status)])
      counters.set(key, counter)
    }
    return Metric.update(counter, 1)
  }
  const observeLatency = (toolId: string, latencyMs: number) => {
    let histogram = histograms.get(toolId)
    if (histogram === undefined) {
      histogram = Metric.tagged(toolLatency, "tool", toolId)
      histograms.set(toolId, histogram)
    }
    return Metric.update(histogram, latencyMs)
  }
  return { countCall, observeLatency }
}
