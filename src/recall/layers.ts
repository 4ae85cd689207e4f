import type { FileSystem } from "@effect/platform"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import type { SqlClient } from "@effect/sql"
import { Layer } from "effect"
import type { AgentConfig } from "../config/AgentConfig.js"
import * as Embedder from "./Embedder.js"
import { Recall } from "./Recall.js"
import * as RecallStoreSqlite from "./RecallStoreSqlite.js"

/**
 * The agent's recall over kern.db: the SQLite store and the embedder its config asks for (the provider's
 * `/embeddings` over its own undici client, or none). The embedder is shared with the context's segmentation.
 */
export const layer: Layer.Layer<Recall | Embedder.Embedder, never, AgentConfig | SqlClient.SqlClient | FileSystem.FileSystem> = Recall
  .Default.pipe(
    Layer.provide(RecallStoreSqlite.layer),
    Layer.provideMerge(Embedder.layerFromConfig.pipe(Layer.provide(NodeHttpClient.layerUndici)))
  )
