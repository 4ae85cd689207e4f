import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { markerPattern } from "./echoModel.js"

/** What one channel's peer (the fake Telegram or Slack, the HTTP client) shows at the end of a run. */
export interface ChannelView {
  readonly name: string
  /** Markers of the messages sent, in order. */
  readonly sent: ReadonlyArray<string>
  /** Messages the client knows were refused (an HTTP error answer), by marker. */
  readonly refused: ReadonlySet<string>
  /** Each reply the user received, by marker: how many times. */
  readonly delivered: ReadonlyMap<string, number>
  /** The texts of the bot's messages that are no reply (notices, placeholders, leftovers). */
  readonly others: ReadonlyArray<string>
}

export interface SessionCounts {
  readonly stored: ReadonlyMap<string, number>
  readonly answered: ReadonlyMap<string, number>
  /** Lines of a session file that are not JSON (a torn write). */
  readonly unreadable: number
}

const count = (map: Map<string, number>, text: string) => {
  for (const m of text.matchAll(markerPattern)) map.set(m[0], (map.get(m[0]) ?? 0) + 1)
}

/** User and assistant lines of every session file of the agent, by marker. */
export const readSessions = (sessionsDir: string): SessionCounts => {
  const stored = new Map<string, number>()
  const answered = new Map<string, number>()
  let unreadable = 0
  for (const name of NodeFs.readdirSync(sessionsDir).filter((n) => n.endsWith(".jsonl"))) {
    for (const line of NodeFs.readFileSync(NodePath.join(sessionsDir, name), "utf8").split("\n")) {
      if (line.trim() === "") continue
      let parsed: { _tag?: string; text?: string }
      try {
        parsed = JSON.parse(line) as { _tag?: string; text?: string }
      } catch {
        unreadable++
        continue
      }
      if (parsed._tag === "user") count(stored, parsed.text ?? "")
      if (parsed._tag === "assistant") count(answered, parsed.text ?? "")
    }
  }
  return { stored, answered, unreadable }
}

/** How a bot message that is no reply reads. */
export const classifyOther = (text: string): "interrupted" | "failure" | "pairing" | "stale" =>
  text.includes("kern stopped before this turn finished")
    ? "interrupted"
    : /disk (is )?full|could not (answer|take) that|not recorded/i.test(text)
    ? "failure"
    : text.includes("kern pair")
    ? "pairing"
    : "stale"

export interface Row {
  readonly channel: string
  readonly sent: number
  readonly refused: number
  readonly stored: number
  readonly answered: number
  readonly delivered: number
  readonly duplicates: number
  readonly lost: number
  /** Stored, never answered (the turn was cut by a kill). */
  readonly unanswered: number
  /** Bot messages telling the user the turn was interrupted / failed. */
  readonly interrupted: number
  readonly failures: number
  /** Answered in the session, never received by the user. */
  readonly undelivered: number
  readonly stale: number
  readonly staleTexts: ReadonlyArray<string>
  readonly lostMarkers: ReadonlyArray<string>
  /** Each marker twice somewhere, with where: stored / answered / delivered counts. */
  readonly duplicateMarkers: ReadonlyArray<string>
  readonly undeliveredMarkers: ReadonlyArray<string>
}

/**
 * One channel's figures. A message is lost when it was sent, not refused to its client, and is in no session; for a
 * chat channel, whose refusals are notices in the chat (no marker), the failure notices count against the
 * messages not stored.
 */
export const rowOf = (view: ChannelView, sessions: SessionCounts): Row => {
  const sent = new Set(view.sent)
  const stored = view.sent.filter((m) => (sessions.stored.get(m) ?? 0) > 0)
  const answered = view.sent.filter((m) => (sessions.answered.get(m) ?? 0) > 0)
  const delivered = view.sent.filter((m) => (view.delivered.get(m) ?? 0) > 0)
  const times = (m: string) => [sessions.stored.get(m) ?? 0, sessions.answered.get(m) ?? 0, view.delivered.get(m) ?? 0]
  const duplicateMarkers = [...sent].filter((m) => times(m).some((n) => n > 1))
    .map((m) => `${m} stored/answered/delivered ${times(m).join("/")}`)
  const undeliveredMarkers = answered.filter((m) => (view.delivered.get(m) ?? 0) === 0)
  const kinds = view.others.map(classifyOther)
  const failures = kinds.filter((k) => k === "failure").length
  const notStored = view.sent.filter((m) => (sessions.stored.get(m) ?? 0) === 0)
  const refused = notStored.filter((m) => view.refused.has(m))
  const unexplained = notStored.filter((m) => !view.refused.has(m))
  const lostCount = view.refused.size > 0 || view.name === "http" ? unexplained.length : Math.max(0, unexplained.length - failures)
  // The HTTP client's "others" are the errors it was told; only a chat keeps placeholders.
  const staleTexts = view.name === "http" ? [] : view.others.filter((t) => classifyOther(t) === "stale")
  return {
    channel: view.name,
    sent: view.sent.length,
    refused: refused.length + (view.name === "http" ? 0 : Math.min(failures, unexplained.length)),
    stored: stored.length,
    answered: answered.length,
    delivered: delivered.length,
    duplicates: duplicateMarkers.length,
    lost: lostCount,
    unanswered: stored.filter((m) => (sessions.answered.get(m) ?? 0) === 0).length,
    interrupted: kinds.filter((k) => k === "interrupted").length,
    failures,
    undelivered: undeliveredMarkers.length,
    stale: staleTexts.length,
    staleTexts,
    lostMarkers: lostCount === 0 ? [] : unexplained,
    duplicateMarkers,
    undeliveredMarkers
  }
}

const columns: ReadonlyArray<[string, (row: Row) => number | string]> = [
  ["channel", (r) => r.channel],
  ["sent", (r) => r.sent],
  ["refused", (r) => r.refused],
  ["stored", (r) => r.stored],
  ["answered", (r) => r.answered],
  ["delivered", (r) => r.delivered],
  ["duplicates", (r) => r.duplicates],
  ["lost", (r) => r.lost],
  ["unanswered", (r) => r.unanswered],
  ["interrupted notices", (r) => r.interrupted],
  ["failure notices", (r) => r.failures],
  ["undelivered", (r) => r.undelivered],
  ["stale placeholders", (r) => r.stale]
]

/** The figures as a Markdown table, with a total row. */
export const table = (rows: ReadonlyArray<Row>): string => {
  const total: Row = rows.reduce((sum, r) => ({
    ...sum,
    sent: sum.sent + r.sent,
    refused: sum.refused + r.refused,
    stored: sum.stored + r.stored,
    answered: sum.answered + r.answered,
    delivered: sum.delivered + r.delivered,
    duplicates: sum.duplicates + r.duplicates,
    lost: sum.lost + r.lost,
    unanswered: sum.unanswered + r.unanswered,
    interrupted: sum.interrupted + r.interrupted,
    failures: sum.failures + r.failures,
    undelivered: sum.undelivered + r.undelivered,
    stale: sum.stale + r.stale
  }), { ...rows[0]!, channel: "total", sent: 0, refused: 0, stored: 0, answered: 0, delivered: 0, duplicates: 0, lost: 0, unanswered: 0, interrupted: 0, failures: 0, undelivered: 0, stale: 0 })
  const lines = [...rows, total].map((row) => `| ${columns.map(([, f]) => f(row)).join(" | ")} |`)
  return [`| ${columns.map(([h]) => h).join(" | ")} |`, `|${columns.map(() => "---").join("|")}|`, ...lines].join("\n")
}

/** What makes a run fail: a message lost or twice, a reply never delivered, a placeholder left. */
export const problems = (rows: ReadonlyArray<Row>, sessions: SessionCounts): ReadonlyArray<string> => [
  ...rows.flatMap((r) => [
    ...(r.lost > 0 ? [`${r.channel}: ${r.lost} lost (${r.lostMarkers.slice(0, 10).join(", ")})`] : []),
    ...(r.duplicates > 0 ? [`${r.channel}: ${r.duplicates} twice (${r.duplicateMarkers.slice(0, 10).join(", ")})`] : []),
    ...(r.undelivered > 0 ? [`${r.channel}: answered, never delivered: ${r.undeliveredMarkers.slice(0, 10).join(", ")}`] : []),
    ...(r.stale > 0 ? [`${r.channel}: ${r.stale} stale placeholders (${r.staleTexts.slice(0, 5).map((t) => JSON.stringify(t)).join(", ")})`] : [])
  ]),
  ...(sessions.unreadable > 0 ? [`${sessions.unreadable} unreadable session lines`] : [])
]

/** What the users of each channel were told when their message failed: each distinct text, with how often. */
export const toldTexts = (views: ReadonlyArray<ChannelView>): ReadonlyArray<string> =>
  views.flatMap((view) => {
    const counts = new Map<string, number>()
    for (const text of view.others) if (classifyOther(text) === "failure") counts.set(text, (counts.get(text) ?? 0) + 1)
    return [...counts].map(([text, n]) => `${view.name} (${n}×): ${text}`)
  })
