import { counted } from "../config/counted.js"
import type { LoadResult, RecallHit, RecallStats, SearchResult } from "./schema.js"

/** Characters of a hit shown in a search listing; a load gives the messages whole. */
export const previewChars = 1_200

const minute = (iso: string) => iso.slice(0, 16).replace("T", " ")

/** How the reader of a search listing gets the whole of a hit that was cut: a tool call, or a command to run. */
export type WholeHit = (hit: RecallHit) => string

/** For the model: the tools it has that read the rest (recall's load mode, read for a file). */
export const toolWholeHit: WholeHit = (hit) =>
  hit.source === "session"
    ? `recall { "mode": "load", "sessionId": ${JSON.stringify(hit.sessionId)}, "messageStart": ${hit.messageStart}, ` +
      `"messageEnd": ${hit.messageEnd} } reads the messages whole`
    : `read { "path": ${JSON.stringify(hit.path)} } reads the file`

/** Search hits as text for a model or a terminal: where, when, how near, and the chunk (previewed). */
export const searchText = (result: SearchResult, whole: WholeHit): string => {
  if (result.hits.length === 0) return `No past conversation or file matches "${result.query}".`
  const lines = result.hits.map((hit, i) => {
    const where = hit.source === "session"
      ? `session ${hit.sessionId} messages ${hit.messageStart}-${hit.messageEnd}`
      : `file ${hit.path}`
    const when = hit.startedAt === hit.endedAt ? minute(hit.startedAt) : `${minute(hit.startedAt)} → ${minute(hit.endedAt)}`
    const distance = hit.distance === null ? "" : `, distance ${hit.distance.toFixed(3)}`
    const preview = hit.text.length > previewChars
      ? `${hit.text.slice(0, previewChars)}… [${counted(hit.text.length - previewChars, "more character", "more characters")}: ${whole(hit)}]`
      : hit.text
    return `${i + 1}. ${where} (${when}${distance})\n${preview}`
  })
  const mode = result.mode === "hybrid" ? "" : "\n(keyword search only: embeddings are unavailable)"
  return `${lines.join("\n\n")}${mode}`
}

/** Loaded messages as text, with where to continue when the range did not fit. */
export const loadText = (result: LoadResult, end: number): string => {
  const body = result.messages.map((m) => `[${m.index}] ${m.role} (${minute(m.at)}):\n${m.text}`).join("\n\n")
  return result.nextMessageStart === null
    ? body
    : `${body}\n\n[messages ${result.nextMessageStart}-${end} not shown yet: load again with messageStart ${result.nextMessageStart}]`
}

/** The embedding side of recall in one line: model and dimension, or keyword-only and why. */
export const embeddingLine = (stats: RecallStats): string =>
  stats.embedding.mode === "keyword"
    ? `keyword-only (${stats.embedding.reason ?? "embeddings unavailable"})`
    : `${stats.embedding.model ?? "?"}${stats.embedding.dimension === null ? " (dimension not probed yet)" : `, ${stats.embedding.dimension} dimensions`}` +
      (stats.embedding.reason === null ? "" : `; last attempt failed: ${stats.embedding.reason}`)

/** The index in one line: what is indexed, over which dates, whether a backfill runs. */
export const indexLine = (stats: RecallStats): string =>
  `${counted(stats.messages, "message")} in ${counted(stats.chunks, "chunk")} from ${counted(stats.sessions, "session")}, ` +
  counted(stats.files, "file") +
  (stats.from === null ? "" : `, ${stats.from.slice(0, 10)} to ${(stats.to ?? stats.from).slice(0, 10)}`) +
  (stats.unembedded > 0 && stats.embedding.mode === "vectors" ? `, ${counted(stats.unembedded, "chunk")} waiting for vectors` : "") +
  (stats.backfillRunning ? "; backfill running" : "")
