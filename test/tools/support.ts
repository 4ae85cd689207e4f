import type { FileSystem, Path } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import type { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as Database from "../../src/storage/Database.js"
import type * as HostResolver from "../../src/tools/HostResolver.js"
import * as ToolServices from "../../src/tools/ToolServices.js"
import { ToolSession } from "../../src/tools/ToolSession.js"
import type { WorkspaceOptions } from "../../src/tools/Workspace.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"

export { makeTempDir, writeFiles }

/** A temp agent folder holding `files`. */
export const makeWorkspace = (files: Readonly<Record<string, string>> = {}): string => {
  const root = NodeFs.realpathSync(makeTempDir("kern-tools-"))
  writeFiles(root, files)
  return root
}

/** Every tool service over `root`, with a real kern.db under `<root>/.kern/` (or in memory) and Node's platform. */
export const toolsLayer = (
  root: string,
  options: Omit<WorkspaceOptions, "root"> = {},
  extra: {
    readonly memoryDb?: boolean
    readonly resolver?: Layer.Layer<HostResolver.HostResolver>
    /** kern.db's layer (test/support/databases.ts), instead of a file under `.kern/` or `memoryDb`. */
    readonly database?: Layer.Layer<SqlClient.SqlClient, Database.DatabaseError>
  } = {}
) =>
  ToolServices.layerTest(root, options, extra.resolver).pipe(
    Layer.provideMerge(
      extra.database ?? (extra.memoryDb === true ? Database.layerMemory : Database.layer({ filename: NodePath.join(root, ".kern", "kern.db") }))
    ),
    Layer.provideMerge(NodeContext.layer),
    Layer.orDie
  )

/** What a handler may need: the tool services, the platform and the session. */
export type ToolRequirements =
  | ToolServices.ToolServices
  | ToolSession
  | FileSystem.FileSystem
  | Path.Path
  | SqlClient.SqlClient

export const inSession = (sessionId = "session-1") => Effect.provideService(ToolSession, { sessionId })

export const readText = (root: string, relative: string): string => NodeFs.readFileSync(NodePath.join(root, relative), "utf8")
