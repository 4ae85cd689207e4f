import type { FileSystem, Path } from "@effect/platform"
import type { SqlClient } from "@effect/sql"
import { Layer } from "effect"
import type { AgentConfig } from "../config/AgentConfig.js"
import type { KnownSecrets } from "../config/KnownSecrets.js"
import { ArtifactStore } from "./ArtifactStore.js"
import { ContextStats } from "./ContextStats.js"
import * as GuardedHttpClient from "./guardedHttpClient.js"
import * as HostResolver from "./HostResolver.js"
import { OutputCompactor } from "./OutputCompactor.js"
import * as Questions from "./Questions.js"
import { ReadTracker } from "./ReadTracker.js"
import * as RegexGuard from "./regexGuard.js"
import * as SearchHttpClient from "./webSearch/SearchHttpClient.js"
import * as Workspace from "./Workspace.js"
import { WriteLock } from "./WriteLock.js"

/**
 * Every service the built-in tool handlers and the output compactor need, besides the platform. The HTTP client is
 * the guarded one under its own Tag: it connects only where the address policy allows and is never the ambient
 * HttpClient of what is built on the tools. web_search has its own (SearchHttpClient): it asks only the address the
 * operator configured.
 */
export type ToolServices =
  | GuardedHttpClient.GuardedHttpClient
  | Workspace.Workspace
  | ReadTracker
  | WriteLock
  | ArtifactStore
  | ContextStats
  | OutputCompactor
  | HostResolver.HostResolver
  | SearchHttpClient.SearchHttpClient
  | Questions.Questions

/** The tool services over a given workspace layer, host resolver and questions (their askTimeout). */
export const layerWith = <E, R, RQ>(
  workspace: Layer.Layer<Workspace.Workspace, E, R>,
  resolver: Layer.Layer<HostResolver.HostResolver>,
  questions: Layer.Layer<Questions.Questions, never, RQ>
): Layer.Layer<ToolServices, E, R | RQ | SqlClient.SqlClient | FileSystem.FileSystem | Path.Path> => {
  const stores = Layer.mergeAll(ArtifactStore.Default, ContextStats.Default).pipe(Layer.provideMerge(workspace))
  const compactor = OutputCompactor.Default.pipe(Layer.provideMerge(stores))
  const guarded = GuardedHttpClient.layer.pipe(Layer.provideMerge(Layer.mergeAll(compactor, resolver)))
  return Layer.mergeAll(ReadTracker.Default, WriteLock.Default, RegexGuard.layer, SearchHttpClient.layer, questions).pipe(
    Layer.provideMerge(guarded)
  )
}

/** The tool services of the loaded agent folder (its kern.db is the SqlClient provided). */
export const layer: Layer.Layer<
  ToolServices,
  never,
  AgentConfig | KnownSecrets | SqlClient.SqlClient | FileSystem.FileSystem | Path.Path
> = layerWith(Workspace.layer, HostResolver.layerNode, Questions.layer)

/** The tool services over a folder, for tests and embedding apps. */
export const layerTest = (
  root: string,
  options: Omit<Workspace.WorkspaceOptions, "root"> = {},
  resolver: Layer.Layer<HostResolver.HostResolver> = HostResolver.layerStatic({ localhost: ["127.0.0.1"] })
) => layerWith(Workspace.layerTest(root, options), resolver, Questions.layerWith(300))
