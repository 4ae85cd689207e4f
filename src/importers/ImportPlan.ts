import type { Effect } from "effect"
import type { SessionMessage } from "../session/messages.js"

/** The agents kern imports from. */
export const importKinds = ["kern-ai", "openclaw", "opencode"] as const
export type ImportKind = (typeof importKinds)[number]

/** Something of the source that was not imported, and why, for the summary. */
export interface Skipped {
  /** The file or entry, as the source names it. */
  readonly what: string
  readonly why: string
}

/** One conversation of the source, converted to kern's messages. */
export interface ConvertedSession {
  /** The source's own id for it: what makes a second import of the same source a no-op. */
  readonly sourceId: string
  readonly title?: string | undefined
  /** When the conversation started, by the source's account. */
  readonly createdAtMs: number
  readonly messages: ReadonlyArray<SessionMessage>
  /** What within it was kept as text or left out, in words (one line each). */
  readonly notes: ReadonlyArray<string>
}

/** A conversation found in the source, read and converted only when it is imported (a big source is never all in memory). */
export interface SessionSource {
  readonly sourceId: string
  /** Where it is in the source, for progress and skip lines. */
  readonly label: string
  readonly load: Effect.Effect<ConvertedSession, Skipped>
}

/** A memory file of the source and where it goes in the agent folder (relative to it, `/`-separated). */
export interface MemorySource {
  readonly label: string
  readonly target: string
  readonly read: Effect.Effect<Uint8Array, Skipped>
}

/** What an importer found in a source. */
export interface ImportPlan {
  readonly kind: ImportKind
  readonly source: string
  readonly sessions: ReadonlyArray<SessionSource>
  readonly memory: ReadonlyArray<MemorySource>
  readonly skipped: ReadonlyArray<Skipped>
}
