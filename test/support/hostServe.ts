import { Effect, type Fiber } from "effect"
import type { ChildProcess } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { type CliResult, runKern } from "./cli.js"
import { freePort } from "./freePort.js"
import { makeTempDir } from "./tempDir.js"
import { eventually } from "./waitFor.js"

/** A variable's value in an env file (`.kern/.env`, `.kern-host/.env`), or undefined while the file or line is absent. */
export const envValue = (file: string, name: string): string | undefined =>
  NodeFs.existsSync(file)
    ? NodeFs.readFileSync(file, "utf8").split("\n").find((l) => l.startsWith(`${name}=`))?.slice(name.length + 1)
    : undefined

/** The runner (`host:port` of its cluster address) whose lock is on the agent folder `dir` now, if any. */
export const lockRunner = (dir: string): string | undefined => {
  const file = NodePath.join(dir, ".kern/agent.lock")
  if (!NodeFs.existsSync(file)) return undefined
  try {
    return (JSON.parse(NodeFs.readFileSync(file, "utf8")) as { cluster?: { runner: string } }).cluster?.runner
  } catch {
    return undefined
  }
}

export interface RunningHost {
  /** `http://127.0.0.1:<port>` as the host's lock records it. */
  readonly origin: string
  readonly port: number
  /** `.kern-host/host.lock` in the host's home (host.json's folder). */
  readonly lock: string
  /** The host process, for a test that signals it. */
  readonly child: () => ChildProcess | undefined
  /** What the host printed on stderr so far (for failure messages). */
  readonly stderr: () => string
  /** The `kern serve` run, ending when the process does. */
  readonly exited: Fiber.RuntimeFiber<CliResult>
}

/**
 * The real `kern serve --config <config>` (host.json in its home folder), started and waited for until its lock
 * records the address; killed with SIGKILL when the caller's scope closes, whatever happened.
 */
export const startHost = (config: string, env: Record<string, string>) =>
  Effect.gen(function*() {
    let child: ChildProcess | undefined
    let stderr = ""
    const exited = yield* Effect.fork(Effect.promise(() =>
      runKern(["serve", "--config", config], {
        env,
        onSpawn: (spawned) => {
          child = spawned
          spawned.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
        }
      })
    ))
    yield* Effect.addFinalizer(() => Effect.sync(() => child?.kill("SIGKILL")))
    const lock = NodePath.join(NodePath.dirname(config), ".kern-host/host.lock")
    const recorded = yield* eventually(() => NodeFs.existsSync(lock) && NodeFs.readFileSync(lock, "utf8").includes("address"))
    if (!recorded) return yield* Effect.dieMessage(`kern serve never recorded its address: ${stderr}`)
    const origin = JSON.parse(NodeFs.readFileSync(lock, "utf8")).address as string
    return { origin, port: Number(new URL(origin).port), lock, child: () => child, stderr: () => stderr, exited } satisfies RunningHost
  })

/** An agent folder's config for runners sharing it on PostgreSQL: its kern.db in `schema`, nothing in the background. */
export const runnerAgentConfig = (url: string, schema: string) => ({
  heartbeatInterval: 0,
  autoCommit: false,
  recall: false,
  database: { url, schema }
})

/**
 * One `kern serve` runner among several on PostgreSQL (`url`), in a home of its own, hosting `agents` (name → folder),
 * its cluster on a free port with short locks: a dead runner's agents move once its locks are 4 s old.
 */
export const startRunner = (label: string, options: {
  readonly agents: Readonly<Record<string, string>>
  readonly url: string
  readonly idleSeconds: number
  readonly env: Record<string, string>
  /** The cluster's shards (16 unless given), the same on every runner. */
  readonly shards?: number
}) =>
  Effect.gen(function*() {
    const home = makeTempDir(`kern-runner-${label}-`)
    const config = NodePath.join(home, "host.json")
    const clusterPort = yield* freePort
    NodeFs.writeFileSync(config, JSON.stringify({
      agents: options.agents,
      port: 0,
      idleSeconds: options.idleSeconds,
      database: { url: options.url },
      cluster: { host: "127.0.0.1", port: clusterPort, lockExpirationSeconds: 4, shards: options.shards ?? 16 }
    }))
    return { host: yield* startHost(config, options.env), home, address: `127.0.0.1:${clusterPort}` }
  })
