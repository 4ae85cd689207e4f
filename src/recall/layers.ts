import type { FileSystem } from "@effect/platform"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import type { SqlClient } from "@effect/sql"
import { Layer } from "effect"
import type { AgentConfig } from "../config/AgentConfig.js"
import type { KnownSecrets } from "../config/KnownSecrets.js"
import * as RedactingHttpClient from "../model/RedactingHttpClient.js"
import * as SpendGuard from "../model/SpendGuard.js"
import * as Embedder from "./Embedder.js"
import { Recall } from "./Recall.js"
import * as RecallStoreForClient from "./storeForClient.js"

/**
 * The agent's recall over kern.db: the store of its database (SQLite, or PostgreSQL with `database.url`) and the embedder its config asks for (the provider's
 * `/embeddings` over its own undici client, or none). The embedder is shared with the context's segmentation. No
 * known secret reaches the embeddings endpoint (RedactingHttpClient). Its calls are behind the agent's spend ceiling:
 * SpendGuard.layer is the same value the runtime provides, so one build shares one guard (layers are memoized).
 */
export const layer: Layer.Layer<Recall | Embedder.Embedder, never, AgentConfig | KnownSecrets | SqlClient.SqlClient | FileSystem.FileSystem> = Recall
  .Default.pipe(
    Layer.provide(RecallStoreForClient.layer),
    Layer.provideMerge(Embedder.layerFromConfig.pipe(
      Layer.provide(RedactingHttpClient.layer),
      Layer.provide(NodeHttpClient.layerUndici),
      Layer.provide(SpendGuard.layer)
    ))
  )
