// `kern status --host`, and what `kern status DIR` adds for a hosted agent: asked of the host's own routes (GET /host,
// GET /agents, with KERN_HOST_TOKEN from its home), never of the agent, so asking never wakes it. Loaded only then.
import { HttpClient, HttpClientRequest, HttpClientResponse } from "@effect/platform"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Console, Duration, Effect, Option, type Schema } from "effect"
import type { LoadedConfig } from "../config/AgentConfig.js"
import { readHostToken } from "../host/hostHome.js"
import type { HostFiles } from "../storage/hostFiles.js"
import * as LockFile from "../storage/LockFile.js"
import { CommandFailed } from "./errors.js"
import { hostedBy, hostHomeOf } from "./hostedAgent.js"
import type { HostedView } from "../channels/hostedLine.js"
import { HostAgentsBody, HostBody, hostLines, hostProblems, type HostView } from "./hostStatusFormat.js"
import { counted } from "../config/counted.js"

/** One of the host's routes, with its token, decoded. */
const ask = <A, I>(address: string, token: string, path: string, schema: Schema.Schema<A, I>) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const response = yield* client.execute(HttpClientRequest.get(`${address}${path}`).pipe(HttpClientRequest.bearerToken(token)))
    if (response.status !== 200) {
      const text = yield* response.text.pipe(Effect.orElseSucceed(() => ""))
      return yield* new CommandFailed({ message: `the host at ${address} answered ${path} with HTTP ${response.status}: ${text.slice(0, 200)}` })
    }
    return yield* HttpClientResponse.schemaBodyJson(schema)(response)
  }).pipe(
    Effect.scoped,
    Effect.timeoutFail({ duration: Duration.seconds(10), onTimeout: () => new CommandFailed({ message: `the host at ${address} did not answer ${path} within 10 s` }) }),
    Effect.catchTags({
      RequestError: (error) => Effect.fail(new CommandFailed({ message: `the host at ${address} does not answer: ${error.message}` })),
      ResponseError: (error) => Effect.fail(new CommandFailed({ message: `the host at ${address} answered ${path} oddly: ${error.message}` })),
      ParseError: (error) => Effect.fail(new CommandFailed({ message: `the host at ${address} answered ${path} with what kern does not read: ${error.message}` }))
    })
  )

const tokenOf = (files: HostFiles) =>
  Effect.flatMap(readHostToken(files), Option.match({
    onNone: () => Effect.fail(new CommandFailed({ message: `no KERN_HOST_TOKEN in ${files.envFile} (kern serve makes it on its first start)` })),
    onSome: Effect.succeed
  }))

/** The host of a home, as its lock and its routes say. */
export const hostView = (files: HostFiles) =>
  Effect.gen(function*() {
    const holder = yield* LockFile.readHolder(files.lockFile).pipe(Effect.mapError((error) => new CommandFailed({ message: error.message })))
    if (Option.isNone(holder) || holder.value.address === undefined) return { home: files.home, running: false } satisfies HostView
    const address = holder.value.address
    const token = yield* tokenOf(files)
    const [host, agents] = yield* Effect.all([ask(address, token, "/host", HostBody), ask(address, token, "/agents", HostAgentsBody)], {
      concurrency: 2
    })
    return { home: files.home, running: true, address, host, agents: agents.agents } satisfies HostView
  })

/** `kern status --host [DIR]`: address, pid, uptime, memory, and every agent with its state and problem. */
export const run = (args: { readonly dir: string; readonly json: boolean }) =>
  Effect.gen(function*() {
    const view = yield* hostView(yield* hostHomeOf(args.dir))
    yield* Console.log(args.json ? JSON.stringify(view) : hostLines(view).join("\n"))
    const problems = hostProblems(view)
    if (problems.length > 0) {
      return yield* new CommandFailed({ message: `${counted(problems.length, "problem")} listed ${args.json ? "in \"agents\"" : "above"}` })
    }
  }).pipe(Effect.provide(NodeHttpClient.layer))

/**
 * A hosted agent's host and its state there. The state is the host's word (GET /agents) when its token can be read;
 * otherwise the folder's lock says it: held by the host, live; free, passive. What went wrong asking is a problem.
 */
export const hostedStatus = (loaded: LoadedConfig) =>
  Effect.gen(function*() {
    const found = yield* hostedBy(loaded)
    if (Option.isNone(found)) return { view: null, problems: [] as ReadonlyArray<string> }
    const { files, holder, name } = found.value
    if (Option.isNone(holder) || holder.value.address === undefined) {
      return { view: { name, home: files.home, host: null, state: null, problem: null } satisfies HostedView, problems: [] }
    }
    const address = holder.value.address
    const host = { pid: holder.value.pid, address, since: holder.value.startedAt }
    const asked = yield* Effect.either(Effect.flatMap(tokenOf(files), (token) => ask(address, token, "/agents", HostAgentsBody)))
    if (asked._tag === "Left") {
      const lock = yield* LockFile.readHolder(loaded.paths.lockFile).pipe(Effect.orElseSucceed(() => Option.none<LockFile.LockHolder>()))
      const state = Option.isSome(lock) && lock.value.command === "kern serve" ? "live" as const : "passive" as const
      return { view: { name, home: files.home, host, state, problem: null } satisfies HostedView, problems: [asked.left.message] }
    }
    const mine = asked.right.agents.find((a) => a.name === name)
    if (mine === undefined) {
      return {
        view: { name, home: files.home, host, state: null, problem: null } satisfies HostedView,
        problems: [`the host at ${address} does not list ${name}: host.json no longer names it, or names it otherwise`]
      }
    }
    const view: HostedView = { name, home: files.home, host, state: mine.state, problem: mine.problem ?? null }
    return { view, problems: mine.problem === undefined ? [] : [`the host could not wake it: ${mine.problem}`] }
  }).pipe(Effect.provide(NodeHttpClient.layer))
