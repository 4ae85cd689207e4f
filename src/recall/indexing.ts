import { FileSystem } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import { Effect, Option } from "effect"
import * as NodeCrypto from "node:crypto"
import * as NodePath from "node:path"
import { yieldToEventLoop } from "../config/eventLoop.js"
import type { KnownSecret } from "../config/KnownSecrets.js"
import { redactSecretsInText } from "../kernel/secretGuard.js"
import type { TokenCounter } from "../model/tokenizer.js"
import { redactMessage } from "../session/redactMessage.js"
import { readAgentFile, reportEverySkip, type SkippedFiles } from "../storage/agentFiles.js"
import { isNotFound } from "../storage/missingFile.js"
import { chunkFile, chunkTurns, indexedMessage, maxChunkTokens } from "./chunking.js"
import { type IndexedMessage, type RecallStoreError, type RecallStoreShape, type SessionState } from "./RecallStore.js"
import { readSessionTail } from "./sessionTail.js"

/**
 * Messages stored (and chunked) per transaction: each is a synchronous stretch of SQLite, so a backfill never holds a
 * turn up long. 250 kept a turn beside a 75,000-message backfill at ~2× its idle time; 50 kept it at 1.0–1.4× in the
 * same runs, and the index's throughput stays above 5,000 messages/s (recall.* benches).
 */
const sliceMessages = 50

export interface IndexProgress {
  readonly sessions: number
  readonly sessionsDone: number
  readonly messages: number
  /** While a long session is chunked: its messages chunked so far, of how many. */
  readonly chunking?: { readonly chunked: number; readonly of: number } | undefined
}

/** Messages chunked between two progress reports within one session. */
const chunkProgressEvery = 1_000

/** The UTF-8 length: a token count's upper bound, exact enough wherever a text's bytes are within the limit. */
const bytes = (text: string) => Buffer.byteLength(text, "utf8")

/**
 * The counter a text of `most` bytes needs (or texts, none longer): the encoder (loaded on first use, ~0.25 s) only
 * when one could exceed a chunk. Chunking counts each line on its own, and by its bytes while they fit (tokensUpTo);
 * a chat's short turn, or a backfill of ordinary messages, never loads it.
 */
const counterFor = (counter: Effect.Effect<TokenCounter>, most: number) =>
  most <= maxChunkTokens ? Effect.succeed(bytes) : counter

/**
 * At least the bytes of a message's line in a chunk (`role: text`, a tool output cut with a note of what was left
 * out, chunking.ts chunkLine): a cut text is its first maxToolChars characters and a note shorter than 64 bytes.
 */
const lineBytesBound = (message: IndexedMessage) => bytes(message.role) + bytes(message.text) + 64

const fileError = (what: string) => (error: PlatformError) =>
  Effect.logWarning(`kern: recall could not index ${what}: ${error.message}`)

/** Stores a session's new messages in slices, then chunks its finished turns. Returns messages added. */
const indexSession = (
  store: RecallStoreShape,
  counter: Effect.Effect<TokenCounter>,
  secrets: ReadonlyArray<KnownSecret>,
  path: string,
  sessionId: string,
  known: SessionState | undefined,
  onChunked: (chunked: number, of: number) => Effect.Effect<void> = () => Effect.void
): Effect.Effect<number, RecallStoreError | PlatformError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const info = yield* fs.stat(path)
    const dev = String(info.dev)
    const ino = String(Option.getOrElse(info.ino, () => 0))
    const size = Number(info.size)
    let state = known
    // Another file under the same name, or one cut shorter than what was read: start it over.
    if (state !== undefined && (state.dev !== dev || state.ino !== ino || size < state.offset)) {
      yield* store.resetSession(sessionId)
      state = undefined
    }
    const from: SessionState = state ?? { sessionId, dev, ino, offset: 0, messages: 0, chunked: 0 }
    if (state !== undefined && size === state.offset) return 0
    const tail = yield* readSessionTail(path, from.offset)
    // A session written before redaction (or by hand) may hold a secret: the index never does.
    const indexed = tail.messages.map((message, i) => indexedMessage(redactMessage(message, secrets), from.messages + i))
    for (let i = 0; i < indexed.length; i += sliceMessages) {
      const last = i + sliceMessages >= indexed.length
      // Until the last slice the old offset stays: a pass cut short reads the same lines again into the same rows.
      yield* store.appendMessages(
        last ? { ...from, dev, ino, offset: tail.offset, messages: from.messages + indexed.length } : from,
        indexed.slice(i, i + sliceMessages)
      )
      yield* yieldToEventLoop
    }
    if (indexed.length === 0) {
      yield* store.appendMessages({ ...from, dev, ino, offset: tail.offset }, [])
      return 0
    }
    // Chunked a page of messages at a time: each page is one short synchronous stretch, never the whole backlog.
    // The messages of this pass are in hand (they are what was just stored): only those an earlier pass stored and
    // left unchunked (a turn going on past its end, or a pass cut short) are read back.
    let chunked = from.chunked
    const end = from.messages + indexed.length
    const pageAt = (start: number) =>
      Effect.map(
        start < from.messages
          ? store.messagesIn(sessionId, start, Math.min(start + sliceMessages, from.messages) - 1)
          : Effect.succeed([]),
        (stored) => [...stored, ...indexed.slice(Math.max(0, start - from.messages), start + sliceMessages - from.messages)]
      )
    while (chunked < end) {
      const page = yield* pageAt(chunked)
      if (page.length === 0) break
      const count = yield* counterFor(counter, page.reduce((most, m) => Math.max(most, lineBytesBound(m)), 0))
      const full = page.length === sliceMessages && chunked + sliceMessages < end
      const { chunkedUntil, chunks } = chunkTurns(sessionId, page, count, full)
      const next = chunkedUntil ?? chunked
      yield* store.addSessionChunks(sessionId, next, chunks)
      yield* yieldToEventLoop
      if (next === chunked) break
      if (Math.floor(next / chunkProgressEvery) > Math.floor(chunked / chunkProgressEvery)) yield* onChunked(next, end)
      chunked = next
    }
    return indexed.length
  }).pipe(Effect.withSpan("kern.recall.indexSession", { attributes: { sessionId } }))

const sessionFiles = (sessionsDir: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const names = yield* fs.readDirectory(sessionsDir).pipe(
      Effect.catchIf(isNotFound, () => Effect.succeed([] as Array<string>))
    )
    return names.filter((name) => name.endsWith(".jsonl")).sort().map((name) => ({
      sessionId: name.slice(0, -".jsonl".length),
      path: NodePath.join(sessionsDir, name)
    }))
  })

/**
 * Indexes what is new in the session files (all of them, or the one named): appended bytes only; sessions whose
 * file is gone are forgotten. A file that cannot be read is reported and skipped, never a failed pass.
 */
export const indexSessions = (
  store: RecallStoreShape,
  counter: Effect.Effect<TokenCounter>,
  secrets: ReadonlyArray<KnownSecret>,
  sessionsDir: string,
  options: { readonly only?: string | undefined; readonly onProgress?: ((p: IndexProgress) => Effect.Effect<void>) | undefined } = {}
): Effect.Effect<number, RecallStoreError | PlatformError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const files = (yield* sessionFiles(sessionsDir)).filter((f) => options.only === undefined || f.sessionId === options.only)
    const states = new Map((yield* store.sessionStates).map((s) => [s.sessionId, s]))
    if (options.only === undefined) {
      const present = new Set(files.map((f) => f.sessionId))
      for (const id of states.keys()) if (!present.has(id)) yield* store.resetSession(id)
    }
    let messages = 0
    let done = 0
    for (const file of files) {
      const onChunked = (chunked: number, of: number) =>
        options.onProgress === undefined
          ? Effect.void
          : options.onProgress({ sessions: files.length, sessionsDone: done, messages, chunking: { chunked, of } })
      messages += yield* indexSession(store, counter, secrets, file.path, file.sessionId, states.get(file.sessionId), onChunked).pipe(
        Effect.catchTag("SystemError", "BadArgument", (error) => Effect.as(fileError(file.path)(error), 0))
      )
      done++
      if (options.onProgress !== undefined) yield* options.onProgress({ sessions: files.length, sessionsDone: done, messages })
    }
    return messages
  })

const markdownUnder = (dir: string, root: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const names = yield* fs.readDirectory(dir, { recursive: true }).pipe(
      Effect.catchIf(isNotFound, () => Effect.succeed([] as Array<string>))
    )
    return names.filter((name) => name.endsWith(".md")).map((name) => NodePath.relative(root, NodePath.join(dir, name)))
  })

/**
 * Indexes knowledge/ and notes/ files whose content changed (by SHA-256), and forgets removed ones. Files are read
 * through the door (src/storage/agentFiles.ts): one it refuses (a link into .kern/ or out of the folder, a FIFO, a
 * device, one too large) is reported to `skipped` and treated as gone, so nothing of it reaches the index, the
 * embeddings or a search.
 */
export const indexFiles = (
  store: RecallStoreShape,
  counter: Effect.Effect<TokenCounter>,
  secrets: ReadonlyArray<KnownSecret>,
  agentDir: string,
  skipped: SkippedFiles = reportEverySkip()
): Effect.Effect<number, RecallStoreError | PlatformError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const paths = [
      ...(yield* markdownUnder(NodePath.join(agentDir, "knowledge"), agentDir)),
      ...(yield* markdownUnder(NodePath.join(agentDir, "notes"), agentDir))
    ].sort()
    const known = yield* store.fileHashes
    const present = new Set<string>()
    let changed = 0
    for (const path of paths) {
      const read = yield* Effect.either(readAgentFile(path, { roots: [agentDir] }))
      if (read._tag === "Left") {
        if (read.left.reason !== "missing") yield* skipped.skip("recall", read.left)
        continue
      }
      yield* skipped.readFine(path)
      present.add(path)
      const text = redactSecretsInText(Buffer.from(read.right.bytes).toString("utf8"), secrets)
      const hash = NodeCrypto.createHash("sha256").update(text).digest("hex")
      if (known.get(path) === hash) continue
      const count = yield* counterFor(counter, bytes(text) + bytes(path) + 1)
      yield* store.replaceFile(path, hash, chunkFile(path, text, Math.floor(read.right.mtimeMs), count))
      changed++
    }
    for (const path of known.keys()) {
      if (!present.has(path)) {
        yield* store.replaceFile(path, undefined, [])
        changed++
      }
    }
    return changed
  }).pipe(Effect.withSpan("kern.recall.indexFiles"))
