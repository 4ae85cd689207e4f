/**
 * `kern import`: one source's conversations become sessions of the agent's own (each in a conversation of its own,
 * `import-<kind>-…`, which only the operator's recall and the Sessions list see; no channel ever writes to it), its
 * memory files land in the agent's memory (committed once, naming the import), and what was imported is indexed for
 * recall before the command ends. A second import of the same source finds each conversation already imported (by
 * its conversation id) and each memory file already there (by its bytes), and writes nothing.
 */
import { FileSystem } from "@effect/platform"
import { Clock, Effect, Either, type Scope } from "effect"
import { AgentConfig } from "../config/AgentConfig.js"
import { counted } from "../config/counted.js"
import { KnownSecrets } from "../config/KnownSecrets.js"
import { Git } from "../memory/Git.js"
import { Tokenizer } from "../model/tokenizer.js"
import { indexFiles, indexSessions } from "../recall/indexing.js"
import { RecallStore } from "../recall/RecallStore.js"
import { conversationOfSession } from "../session/conversationIds.js"
import { AssistantMessage, type SessionMessage, ToolResultMessage, TurnFailedMessage, UserMessage } from "../session/messages.js"
import { SessionStore } from "../session/SessionStore.js"
import { detectKind } from "./detect.js"
import { ImportError } from "./ImportError.js"
import type { ImportKind, ImportPlan, Skipped } from "./ImportPlan.js"
import { planKernAi } from "./kernAi.js"
import { placeMemory } from "./memoryFiles.js"
import { planOpenclaw } from "./openclaw.js"
import { planOpencode } from "./opencode.js"
import { closeLastTurn, importConversation } from "./sessionBuilder.js"
import { sourceRoot } from "./sourceFiles.js"

export interface ImportOptions {
  readonly source: string
  readonly kind?: ImportKind | undefined
  readonly dryRun: boolean
  /** Progress and notices (stderr in the CLI). */
  readonly report: (line: string) => Effect.Effect<void>
}

export interface ImportedSession {
  readonly from: string
  /** The kern session it became (none in a dry run). */
  readonly session?: string | undefined
  readonly messages: number
  readonly notes: ReadonlyArray<string>
}

export interface ImportSummary {
  readonly kind: ImportKind
  readonly source: string
  readonly dryRun: boolean
  readonly sessions: ReadonlyArray<ImportedSession>
  /** Conversations a previous import brought in already. */
  readonly alreadyImported: ReadonlyArray<{ readonly from: string; readonly conversation: string }>
  readonly messages: number
  readonly memory: ReadonlyArray<{ readonly from: string; readonly to: string; readonly outcome: "written" | "renamed" | "same" }>
  readonly skipped: ReadonlyArray<Skipped>
  /** The memory commit, or why there is none (none written, not a git repository, autoCommit off). */
  readonly commit: string
  /** Messages the recall index took in (0 in a dry run or with recall off). */
  readonly indexed: number
}

/** Progress lines: every this many sessions. */
const progressEvery = 25

const plans: Record<ImportKind, (root: string) => Effect.Effect<ImportPlan, ImportError, Scope.Scope>> = {
  "kern-ai": planKernAi,
  openclaw: planOpenclaw,
  opencode: planOpencode
}

/** An imported message's time, never after `nowMs`: a session id is never pushed past the present by a source's clock. */
const notAfter = (nowMs: number) => (message: SessionMessage): SessionMessage => {
  const ms = Date.parse(message.at)
  if (!Number.isNaN(ms) && ms <= nowMs) return message
  const at = new Date(nowMs).toISOString()
  switch (message._tag) {
    case "user":
      return new UserMessage({ text: message.text, ...(message.envelope === undefined ? {} : { envelope: message.envelope }), at })
    case "assistant":
      return new AssistantMessage({ text: message.text, toolCalls: message.toolCalls, at })
    case "tool":
      return new ToolResultMessage({ toolCallId: message.toolCallId, toolName: message.toolName, isError: message.isError, result: message.result, at })
    case "turn-failed":
      return new TurnFailedMessage({ failure: message.failure, message: message.message, at })
  }
}

const commitMemory = (dir: string, files: ReadonlyArray<string>, kind: ImportKind, source: string, fallbackName: string) =>
  Effect.gen(function*() {
    const git = yield* Git
    const fs = yield* FileSystem.FileSystem
    const real = yield* fs.realPath(dir).pipe(Effect.orElseSucceed(() => dir))
    if (!(yield* git.isRepoRoot(dir, real))) return "not committed: the agent folder is not a git repository"
    const message = `kern: import ${kind} memory from ${source}\n\n${files.map((f) => `- ${f}`).join("\n")}\n`
    const identity = (yield* git.exec(dir, ["config", "user.email"])).exitCode === 0
      ? []
      : ["-c", `user.name=${fallbackName}`, "-c", `user.email=${fallbackName}@kern.local`]
    yield* git.run(dir, ["add", "--", ...files])
    yield* git.run(dir, [...identity, "commit", "-q", "-m", message, "--", ...files])
    return `committed (kern: import ${kind} memory from ${source})`
  }).pipe(Effect.catchTag("GitError", (error) => Effect.succeed(`not committed: ${error.message}`)))

/** Imports `options.source` into the agent the layers are built for. */
export const runImport = (options: ImportOptions) =>
  Effect.gen(function*() {
    const { config, paths } = yield* AgentConfig
    const store = yield* SessionStore
    const fs = yield* FileSystem.FileSystem
    const root = yield* sourceRoot(options.source)
    const agentDir = yield* fs.realPath(paths.dir).pipe(
      Effect.mapError((error) => new ImportError({ reason: "failed", message: `${paths.dir}: ${error.message}` }))
    )
    if (root === agentDir || root.startsWith(`${agentDir}/.kern`) || agentDir.startsWith(`${root}/`)) {
      return yield* new ImportError({
        reason: "same-folder",
        message: `${options.source} is the agent folder itself, inside it or around it: import from another folder`
      })
    }
    const kind = yield* detectKind(root, options.source, options.kind)
    const plan = yield* plans[kind](root)
    const skipped: Array<Skipped> = [...plan.skipped]
    const existing = new Set(
      (yield* fs.readDirectory(paths.sessionsDir).pipe(Effect.orElseSucceed(() => [] as Array<string>)))
        .filter((name) => name.endsWith(".jsonl"))
        .map((name) => conversationOfSession(name.slice(0, -".jsonl".length)))
    )
    const nowMs = yield* Clock.currentTimeMillis
    const sessions: Array<ImportedSession> = []
    const already: Array<{ from: string; conversation: string }> = []
    let messages = 0
    let seen = 0
    if (plan.sessions.length > progressEvery) {
      yield* options.report(`import: ${counted(plan.sessions.length, "conversation")} found in ${options.source}`)
    }
    for (const source of plan.sessions) {
      seen++
      const loaded = yield* Effect.either(source.load)
      if (Either.isLeft(loaded)) {
        skipped.push(loaded.left)
        continue
      }
      const converted = { ...loaded.right, messages: closeLastTurn(loaded.right.messages, kind) }
      if (loaded.right.messages.length === 0) {
        skipped.push({ what: source.label, why: "it holds no messages" })
        continue
      }
      const conversation = importConversation(kind, converted.sourceId)
      if (existing.has(conversation)) {
        already.push({ from: source.label, conversation })
        continue
      }
      existing.add(conversation)
      let session: string | undefined
      if (!options.dryRun) {
        const id = yield* store.createAt(conversation, Math.max(0, Math.min(converted.createdAtMs, nowMs)))
        yield* Effect.scoped(Effect.gen(function*() {
          const opened = yield* store.open(id)
          for (const message of converted.messages) yield* opened.writer.append(notAfter(nowMs)(message))
        }))
        session = id
      }
      messages += converted.messages.length
      sessions.push({ from: source.label, session, messages: converted.messages.length, notes: converted.notes })
      if (seen % progressEvery === 0) {
        yield* options.report(`import: ${seen}/${plan.sessions.length} conversations read, ${counted(messages, "message")} imported`)
      }
    }

    const memory: Array<{ from: string; to: string; outcome: "written" | "renamed" | "same" }> = []
    for (const file of plan.memory) {
      const bytes = yield* Effect.either(file.read)
      if (Either.isLeft(bytes)) {
        skipped.push(bytes.left)
        continue
      }
      const placed = placeMemory(agentDir, file.target, bytes.right, kind, { dryRun: options.dryRun, label: file.label })
      if (Either.isLeft(placed)) skipped.push(placed.left)
      else memory.push({ from: file.label, to: placed.right.path, outcome: placed.right.outcome })
    }
    const written = memory.filter((m) => m.outcome !== "same").map((m) => m.to)
    const commit = options.dryRun
      ? "dry run: nothing written"
      : written.length === 0
      ? "nothing to commit"
      : !config.autoCommit
      ? "not committed (\"autoCommit\": false)"
      : yield* commitMemory(paths.dir, written, kind, options.source, config.name.replace(/[^A-Za-z0-9._-]/g, "-") || "kern")

    let indexed = 0
    if (!options.dryRun && config.recall && (sessions.length > 0 || written.length > 0)) {
      const recallStore = yield* RecallStore
      const tokenizer = yield* Tokenizer
      const { secrets } = yield* KnownSecrets
      const storeError = (error: { readonly message: string }) => new ImportError({ reason: "failed", message: `recall indexing failed: ${error.message}` })
      indexed = yield* indexSessions(recallStore, tokenizer.counter, secrets, paths.sessionsDir, {
        onProgress: (p) =>
          p.sessions > progressEvery && p.sessionsDone % progressEvery === 0
            ? options.report(`import: recall indexed ${p.sessionsDone}/${p.sessions} sessions`)
            : Effect.void
      }).pipe(Effect.mapError(storeError))
      yield* indexFiles(recallStore, tokenizer.counter, secrets, paths.dir).pipe(Effect.mapError(storeError))
    }
    return {
      kind,
      source: options.source,
      dryRun: options.dryRun,
      sessions,
      alreadyImported: already,
      messages,
      memory,
      skipped,
      commit,
      indexed
    } satisfies ImportSummary
  }).pipe(Effect.withSpan("kern.import.run"))

