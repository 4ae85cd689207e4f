import { FileSystem } from "@effect/platform"
import { Effect, Either, ParseResult, Schema } from "effect"
import * as NodePath from "node:path"
import { ClusterConfig } from "../config/cluster.js"
import { clip } from "../config/clip.js"
import { DatabaseConfig } from "../config/database.js"
import { valueAt } from "../config/decode.js"
import { agentNamePattern } from "../storage/hostFiles.js"

/**
 * What `kern serve` hosts: `host.json`, or the folders named on the command line. Each agent is a name and a folder;
 * the name is the one its routes sit under (`/agents/<name>/…`).
 */

/** A hosted agent's name: the registry's key, or its folder's base name (defined where clients find hosts). */
export { agentNamePattern }

export class HostConfigError extends Schema.TaggedError<HostConfigError>()("HostConfigError", {
  message: Schema.String
}) {}

const AgentEntry = Schema.Union(
  Schema.String,
  Schema.Struct({ dir: Schema.String }).annotations({ parseOptions: { onExcessProperty: "error" } })
)

/** host.json as written. Unknown keys are refused (a misspelt `idleSeconds` would otherwise go unnoticed). */
export const HostConfigFile = Schema.Struct({
  agents: Schema.Record({ key: Schema.String, value: AgentEntry }),
  host: Schema.optional(Schema.String.pipe(Schema.minLength(1))),
  port: Schema.optional(Schema.Int.pipe(Schema.between(0, 65535))),
  idleSeconds: Schema.optional(Schema.Number.pipe(Schema.nonNegative())),
  /** With `cluster`: the PostgreSQL database the runners share, the cluster's tables in `schema` (default kern_cluster). */
  database: Schema.optional(DatabaseConfig),
  /** This runner's place among the runners sharing the agents (src/config/cluster.ts). */
  cluster: Schema.optional(ClusterConfig)
}).annotations({ parseOptions: { onExcessProperty: "error" } })

/** The schema of the cluster's own tables when host.json's `database` names none. */
export const defaultClusterSchema = "kern_cluster"

/** A runner among several: where the cluster's tables are, and this runner's place. */
export interface HostCluster {
  readonly database: DatabaseConfig
  readonly runner: ClusterConfig
}

export interface HostedAgent {
  readonly name: string
  /** Absolute. */
  readonly dir: string
}

export interface HostSettings {
  readonly agents: ReadonlyArray<HostedAgent>
  readonly host: string
  /** 0 takes a free port (the address is recorded in the host's lock). */
  readonly port: number
  /** An agent with nothing to do for this long is passivated; 0 never. */
  readonly idleSeconds: number
  /** Set (host.json's `database` and `cluster`): this host is one runner among several sharing the agents. */
  readonly cluster?: HostCluster | undefined
}

export const defaults = { host: "127.0.0.1", port: 4000, idleSeconds: 600 } as const

/** What each of host.json's own keys takes, as a person reads it (the schema's own words are TypeScript's). */
const expectations: Readonly<Record<string, string>> = {
  agents: `an object naming each agent's folder, { "<name>": "<folder>" } or { "<name>": { "dir": "<folder>" } }`,
  host: `the address to listen on, e.g. "127.0.0.1"`,
  port: "an integer port from 0 to 65535 (0 takes a free one)",
  idleSeconds: "seconds, 0 or more (0 never passivates)"
}

const topKeys = Object.keys(HostConfigFile.fields).join(", ")

/** A value as an error message shows it: JSON, cut short. */
const shown = (value: unknown): string => clip(JSON.stringify(value) ?? String(value), 80)

/**
 * Each issue as `<key>: expected …, found …`: host.json's own keys by what they take, a key it does not know by the
 * keys it does, `database` and `cluster` by their schemas' own messages.
 */
const named = (error: ParseResult.ParseError, json: unknown): string => {
  const issues = ParseResult.ArrayFormatter.formatErrorSync(error)
  // A union's other branches (an optional key's "undefined") report on the key above the one that is wrong.
  const deepest = issues.filter((issue) =>
    !issues.some((other) => other.path.length > issue.path.length && issue.path.every((key, i) => other.path[i] === key))
  )
  const lines = deepest.map((issue) => {
    const top = String(issue.path[0] ?? "")
    if (issue.path.length === 0) return `host.json: expected a JSON object with "agents", found ${shown(json)}`
    if (issue.path.length === 1 && !Object.hasOwn(HostConfigFile.fields, top)) {
      return `${top}: not a key of host.json (its keys: ${topKeys})`
    }
    // One agent's entry: named by its agent.
    const [key, expected] = top === "agents" && issue.path.length > 1
      ? [`agents.${String(issue.path[1])}`, `its folder, "<folder>" or { "dir": "<folder>" }`]
      : [issue.path.join("."), expectations[top]]
    if (expected === undefined) return `${key}: ${issue.message}`
    const found = valueAt(json, top === "agents" ? issue.path.slice(0, 2) : issue.path)
    return `${key}: expected ${expected}, found ${found === undefined ? "nothing" : shown(found)}`
  })
  return [...new Set(lines)].join("; ")
}

/** The agents, checked: names that match the pattern, no folder twice. */
export const checkAgents = (agents: ReadonlyArray<HostedAgent>): Either.Either<ReadonlyArray<HostedAgent>, HostConfigError> => {
  const seen = new Map<string, string>()
  const names = new Set<string>()
  for (const agent of agents) {
    if (!agentNamePattern.test(agent.name)) {
      return Either.left(new HostConfigError({
        message: `agents.${agent.name}: an agent's name is lower-case letters, digits and -, starting with a letter or digit, at most 63 (${JSON.stringify(agent.name)})`
      }))
    }
    if (names.has(agent.name)) return Either.left(new HostConfigError({ message: `agents.${agent.name}: named twice` }))
    names.add(agent.name)
    const other = seen.get(agent.dir)
    if (other !== undefined) {
      return Either.left(new HostConfigError({ message: `agents.${agent.name}: the folder ${agent.dir} is already agent ${other}'s` }))
    }
    seen.set(agent.dir, agent.name)
  }
  return Either.right(agents)
}

/** host.json's text, decoded; folders are resolved against `base` (host.json's folder). */
export const parseHostConfig = (text: string, base: string): Either.Either<HostSettings, HostConfigError> => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    return Either.left(new HostConfigError({ message: `host.json is not JSON: ${error instanceof Error ? error.message : String(error)}` }))
  }
  const decoded = Schema.decodeUnknownEither(HostConfigFile)(json, { errors: "all" })
  if (Either.isLeft(decoded)) return Either.left(new HostConfigError({ message: named(decoded.left, json) }))
  const file = decoded.right
  if ((file.cluster === undefined) !== (file.database === undefined)) {
    return Either.left(new HostConfigError({
      message: file.cluster === undefined
        ? "database: is for runners sharing agents and needs cluster { host, port } beside it (this runner's address)"
        : "cluster: needs database { url } beside it (the PostgreSQL database the runners share)"
    }))
  }
  const agents = Object.entries(file.agents).map(([name, entry]) => ({
    name,
    dir: NodePath.resolve(base, typeof entry === "string" ? entry : entry.dir)
  }))
  return Either.map(checkAgents(agents), (checked) => ({
    agents: checked,
    host: file.host ?? defaults.host,
    port: file.port ?? defaults.port,
    idleSeconds: file.idleSeconds ?? defaults.idleSeconds,
    cluster: file.cluster === undefined || file.database === undefined ? undefined : { database: file.database, runner: file.cluster }
  }))
}

/** `kern serve --config FILE`: the file read and decoded. */
export const loadHostConfig = (file: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const text = yield* fs.readFileString(file).pipe(
      Effect.mapError((error) => new HostConfigError({ message: `could not read ${file}: ${error.message}` }))
    )
    return yield* Either.match(parseHostConfig(text, NodePath.dirname(NodePath.resolve(file))), {
      onLeft: (error) => Effect.fail(new HostConfigError({ message: `${file}: ${error.message}` })),
      onRight: Effect.succeed
    })
  }).pipe(Effect.withSpan("kern.host.config.load"))

/** `kern serve DIR...`: each folder named by its base name. */
export const settingsOfDirs = (
  dirs: ReadonlyArray<string>,
  options: { readonly host?: string | undefined; readonly port?: number | undefined; readonly idleSeconds?: number | undefined }
): Either.Either<HostSettings, HostConfigError> =>
  Either.map(
    checkAgents(dirs.map((dir) => ({ name: NodePath.basename(NodePath.resolve(dir)), dir: NodePath.resolve(dir) }))),
    (agents) => ({
      agents,
      host: options.host ?? defaults.host,
      port: options.port ?? defaults.port,
      idleSeconds: options.idleSeconds ?? defaults.idleSeconds
    })
  )
