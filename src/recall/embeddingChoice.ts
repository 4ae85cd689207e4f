// Apart from Embedder.ts so that `kern status` can say which embeddings a config asks for without loading the
// embedder's HTTP client and the model providers' error mapping.
import { Either, Option } from "effect"
import type { LoadedConfig } from "../config/AgentConfig.js"
import { type ModelSettings, resolveEmbeddingSettings } from "../model/ModelSettings.js"

/** What a loaded config asks for: the provider's `/embeddings` with these settings, or none and why. */
export const embeddingChoice = (
  loaded: Pick<LoadedConfig, "config" | "env">
): Either.Either<ModelSettings, string> =>
  Either.match(resolveEmbeddingSettings(loaded), {
    onLeft: (error) => Either.left(`embeddings are unavailable: ${error.message}`),
    onRight: Option.match({
      onNone: () =>
        Either.left(
          loaded.config.embeddingModel === false
            ? "embeddingModel is false"
            : `provider "${loaded.config.provider}" has no default embedding model (set "embeddingModel")`
        ),
      onSome: (settings) => Either.right(settings)
    })
  })
