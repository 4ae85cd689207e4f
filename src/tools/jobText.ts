import type { JobRow } from "./JobStore.js"

/** `4m12s`, `12s`, `1h0m3s`, `0.4s`. */
export const formatDuration = (ms: number): string => {
  if (ms < 1000) return `${(Math.max(0, ms) / 1000).toFixed(1)}s`
  const total = Math.floor(ms / 1000)
  const h = Math.floor(total / 3600)
  const m = Math.floor((total % 3600) / 60)
  const s = total % 60
  return h > 0 ? `${h}h${m}m${s}s` : m > 0 ? `${m}m${s}s` : `${s}s`
}

/** How the job ended, as its report's first line says it: `finished: exit 0`, `killed by jobs kill`, …. */
export const endDescription = (row: Pick<JobRow, "state" | "exitCode" | "signal">, maxLifetimeMs: number): string => {
  switch (row.state) {
    case "running":
      return "running"
    case "finished":
      return row.exitCode === null ? `finished: killed by ${row.signal ?? "a signal"}` : `finished: exit ${row.exitCode}`
    case "killed":
      return "killed by jobs kill"
    case "timed_out":
      return `killed: it ran past jobs.maxLifetimeMs (${maxLifetimeMs} ms)`
    case "interrupted":
      return "interrupted"
  }
}

/** At most `chars` of the end of `text`, from a line's start when one is near. */
export const outputTail = (text: string, chars = 1500): string => {
  if (text.length <= chars) return text
  const cut = text.slice(-chars)
  const newline = cut.indexOf("\n")
  return `…${newline >= 0 && newline < 200 ? cut.slice(newline) : cut}`
}

/** The turn a job's end starts in its conversation: `[job 3 finished: exit 0 after 4m12s] command`, the tail, where the rest is. */
export const endReport = (
  row: Pick<JobRow, "id" | "command" | "state" | "exitCode" | "signal" | "startedAtMs" | "droppedBytes">,
  endedAtMs: number,
  tail: string,
  artifactId: string | null,
  maxLifetimeMs: number
): string => {
  const took = formatDuration(endedAtMs - row.startedAtMs)
  const head = row.state === "interrupted"
    ? `[job ${row.id} interrupted: the agent stopped or died while it ran (started ${took} before this start); it was not run again]`
    : `[job ${row.id} ${endDescription(row, maxLifetimeMs)} after ${took}]`
  const command = row.command.length > 300 ? `${row.command.slice(0, 300)}…` : row.command
  const trimmed = outputTail(tail).replace(/\n+$/, "")
  return [
    `${head} ${command}`,
    trimmed === "" ? "(no output)" : `Output (end):\n${trimmed}`,
    ...(row.droppedBytes > 0 ? [`${row.droppedBytes} bytes past jobs.maxOutputBytes were dropped.`] : []),
    artifactId === null
      ? `Its output: jobs { action: "output", id: ${row.id} }.`
      : `Full output: jobs { action: "output", id: ${row.id} } or retrieve_tool_output { artifactId: "${artifactId}" }.`
  ].join("\n")
}
