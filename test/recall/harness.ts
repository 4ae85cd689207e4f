import * as KnownSecrets from "../../src/config/KnownSecrets.js"
import { NodeContext } from "@effect/platform-node"
import { Effect, Layer, Schema } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { AgentConfig, type LoadedConfig } from "../../src/config/AgentConfig.js"
import { agentPaths } from "../../src/config/paths.js"
import { KernConfigFile } from "../../src/config/schema.js"
import * as Embedder from "../../src/recall/Embedder.js"
import { Recall } from "../../src/recall/Recall.js"
import * as RecallStoreForClient from "../../src/recall/storeForClient.js"
import { AssistantMessage, SessionHeader, SessionLine, ToolResultMessage, UserMessage } from "../../src/session/messages.js"
import { type RecallDatabase, sqlite } from "./databases.js"
import { makeTempDir } from "../support/tempDir.js"

const encodeLine = Schema.encodeSync(Schema.parseJson(SessionLine))
export const lineOf = (line: SessionLine) => `${encodeLine(line)}\n`

/** A loaded config for an agent folder at `dir` (no file is read). */
export const loadedAt = (dir: string, file: Record<string, unknown> = {}, env: Record<string, string> = {}): LoadedConfig => ({
  paths: agentPaths(dir),
  fileExists: true,
  config: { ...Schema.decodeUnknownSync(KernConfigFile)(file), name: "recall-test" },
  env,
  secretKeys: [],
  warnings: []
})

/** A fresh agent folder with its sessions folder. */
export const makeAgentDir = (): string => {
  const dir = makeTempDir("kern-recall-")
  NodeFs.mkdirSync(NodePath.join(dir, ".kern", "sessions"), { recursive: true })
  return dir
}

export const sessionPath = (dir: string, id: string) => NodePath.join(dir, ".kern", "sessions", `${id}.jsonl`)

export const header = (id: string) => new SessionHeader({ version: 1, id, createdAt: "2026-01-01T00:00:00.000Z", agent: "t" })
export const user = (text: string, at = "2026-01-01T10:00:00.000Z") => new UserMessage({ text, at })
export const answer = (text: string, at = "2026-01-01T10:00:01.000Z") => new AssistantMessage({ text, at })
export const callTool = (id: string, name: string, params: unknown, at = "2026-01-01T10:00:01.000Z") =>
  new AssistantMessage({ text: "", toolCalls: [{ id, name, params }], at })
export const toolResult = (id: string, name: string, result: string, at = "2026-01-01T10:00:02.000Z") =>
  new ToolResultMessage({ toolCallId: id, toolName: name, isError: false, result, at })

export const appendLines = (path: string, ...lines: ReadonlyArray<SessionLine>) =>
  NodeFs.appendFileSync(path, lines.map(lineOf).join(""))

/**
 * Recall over a folder's kern.db (a file, so several layers can share it) with the given embedder; on `database`
 * (PostgreSQL: a schema named from the folder), the store the client's dialect picks.
 */
export const recallLayer = (
  loaded: LoadedConfig,
  embedder: Layer.Layer<Embedder.Embedder> = Embedder.layerNone("embeddingModel is false"),
  database: RecallDatabase = sqlite
) =>
  Recall.Default.pipe(
    Layer.provide(RecallStoreForClient.layer),
    Layer.provide(Layer.mergeAll(embedder, Layer.succeed(AgentConfig, loaded), KnownSecrets.layerOf(loaded), NodeContext.layer)),
    Layer.provideMerge(database.sqlLayer(loaded))
  )

export const withRecall = <A, E>(
  loaded: LoadedConfig,
  embedder: Layer.Layer<Embedder.Embedder> | undefined,
  body: (recall: Recall) => Effect.Effect<A, E>
) => Effect.flatMap(Recall, body).pipe(Effect.provide(recallLayer(loaded, embedder)))
