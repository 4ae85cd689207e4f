import { Effect, Option, Schema } from "effect"
import { usageTotals } from "../session/usageTotals.js"
import { AgentConfig, type LoadedConfig } from "../config/AgentConfig.js"
import { apiKeyEnvFor } from "../config/providers.js"
import { seesEverything } from "../kernel/Audience.js"
import { EventLog, type KernelEvent } from "../kernel/EventLog.js"
import { RunContext } from "../kernel/RunContext.js"
import { toolFailure } from "../kernel/ToolFailure.js"
import { orIfAbsent, readAgentText } from "../storage/agentFiles.js"
import { effectiveScope, PairingStore, userKey } from "../users/PairingStore.js"
import { syncUsersFile } from "../users/usersFile.js"
import { maskSecretFields, maskValue } from "./redact.js"
import { RuntimeInfo } from "./RuntimeInfo.js"
import { Recall } from "../recall/Recall.js"
import { Channels } from "./Channels.js"
import { embeddingLine, indexLine } from "../recall/format.js"
import type { ToolMetadata } from "./toolMetadata.js"
import { toYaml } from "./yamlText.js"
import { counted } from "../config/counted.js"
import { reportVariables } from "../config/reportEnvironment.js"

export const kernActions = ["status", "config", "env", "users", "logs"] as const

/**
 * What only the operator's conversation may ask: status (the operator's session and context), users (USERS.md and
 * every pairing), logs (every conversation's tool calls and their errors).
 */
const operatorOnlyActions: ReadonlySet<string> = new Set(["status", "users", "logs"])

/**
 * Seed 000's `kern({ action: "pair", code })`: pairing is a write, its own tool (kern_pair) under the kernel's rules,
 * so kern takes the seed's form only to point there.
 */
const pairAction = "pair"

export const kernLogsDefault = 20
export const kernLogsMax = 200

export const KernArgs = Schema.Struct({
  action: Schema.Literal(...kernActions, pairAction).annotations({
    description: "status: runtime, session, queue and usage; config: the effective config (secrets hidden); " +
      "env: the environment variable names the agent sees (values masked); " +
      "users: USERS.md and paired or waiting channel users; logs: recent kernel events; " +
      "pair: not here, approving a code is the kern_pair tool's"
  }),
  code: Schema.optional(Schema.String.annotations({ description: "pair only: use kern_pair({ code }) instead" })),
  limit: Schema.optional(Schema.Int.pipe(Schema.between(1, kernLogsMax)).annotations({
    description: `logs only: how many recent events to show (default ${kernLogsDefault}, at most ${kernLogsMax})`
  }))
})
export type KernArgs = typeof KernArgs.Type

export const kernTool: ToolMetadata = {
  toolId: "kern",
  name: "Kern",
  description: "Inspect the runtime you run in: status (version, model, uptime, session size, queue, API usage, recall index, chat channels), " +
    "config (effective settings, secrets hidden), env (variable names, values masked), users (USERS.md, paired users " +
    "and who waits to pair), logs (recent kernel events). Pairing codes are never shown: the operator gives them.",
  safetyClass: "READ_ONLY",
  idempotent: true,
  timeoutMs: 10_000,
  scope: "read"
}

export const KernPairArgs = Schema.Struct({
  code: Schema.String.annotations({ description: "the code the user was given, e.g. KERN-7QX4" })
})
export type KernPairArgs = typeof KernPairArgs.Type

/**
 * Approving a pairing changes who may talk to the agent: a write, governed as one. Its own tool rather than an
 * action of `kern`, so the kernel's rules apply to it as they are: not offered under a `read` tool scope, refused in
 * SAFE and STRICT runs, checked by contract enforcement, while `kern` itself stays read-only.
 */
export const kernPairTool: ToolMetadata = {
  toolId: "kern_pair",
  name: "Kern pair",
  description: "Approve a channel user's pairing code when the operator asks (the user may then talk to you), e.g. " +
    "{ code: \"KERN-7QX4\" }. Only the operator can give you the code; under approvalMode ask a person confirms it.",
  safetyClass: "LOCAL_WRITE",
  idempotent: true,
  timeoutMs: 10_000,
  scope: "write"
}

/** Provider keys and roots, channel tokens: the variables kern itself reads (KERN_* are added by prefix). */
const knownVariables = [...reportVariables, "TELEGRAM_API_ROOT", "SLACK_API_URL"]

const formatUptime = (ms: number): string => {
  const total = Math.floor(ms / 1000)
  const [d, h, m, s] = [Math.floor(total / 86_400), Math.floor(total / 3600) % 24, Math.floor(total / 60) % 60, total % 60]
  return d > 0 ? `${d}d ${h}h ${m}m` : h > 0 ? `${h}h ${m}m ${s}s` : m > 0 ? `${m}m ${s}s` : `${s}s`
}

const status = (loaded: LoadedConfig) =>
  Effect.gen(function*() {
    const info = yield* RuntimeInfo
    const uptimeMs = yield* info.uptimeMs
    const session = yield* info.session
    const queue = yield* info.queueLength
    const usage = yield* usageTotals.pipe(
      Effect.map((totals) => ({ ...totals, costUsdCents: Number(totals.costUsdCents.toFixed(4)) })),
      Effect.catchAll((error) => Effect.succeed(`unavailable (${error.message})`))
    )
    const recall = yield* Recall
    const recallFigures = !recall.enabled
      ? "off (\"recall\": false)"
      : yield* recall.stats.pipe(
        Effect.map((stats) => ({ index: indexLine(stats), embeddings: embeddingLine(stats) })),
        Effect.catchAll((error) => Effect.succeed(`unavailable (${error.message})`))
      )
    return {
      version: info.version,
      agent: loaded.config.name,
      provider: loaded.config.provider,
      model: loaded.config.model ?? "(not set)",
      uptime: formatUptime(uptimeMs),
      uptimeMs,
      session: Option.match(session, {
        onNone: () => "none (no conversation is open in this process)",
        onSome: (figures) => ({ id: figures.id, messages: figures.messages, bytes: figures.bytes })
      }),
      context: Option.match(yield* info.context, {
        onNone: () => `no model call yet in this process (maxContextTokens ${loaded.config.maxContextTokens})`,
        onSome: (figures) => ({
          tokens: `${figures.total} of ${figures.maxContextTokens} (system ${figures.system}, tools ${figures.tools}, ` +
            `summaries ${figures.summary}, raw messages ${figures.raw})`,
          window: figures.cut === 0
            ? `all ${counted(figures.messages, "message")} raw (nothing trimmed)`
            : `messages ${figures.cut}-${figures.messages - 1} raw, 0-${figures.cut - 1} stand as ${figures.summaries} ` +
              "summaries (recall loads them whole)",
          ...figures
        })
      }),
      queue: Option.match(queue, { onNone: () => "not available", onSome: (length) => length }),
      usage,
      recall: recallFigures,
      // The chat channels running here (a channel without its tokens is not started and not listed).
      interfaces: (yield* (yield* Channels).statuses).map((channel) => ({
        interface: channel.interface,
        state: channel.state,
        ...(channel.detail === "" ? {} : { detail: channel.detail })
      }))
    }
  })

const envListing = (loaded: LoadedConfig) => {
  const fromFile = new Set(loaded.secretKeys)
  const keyEnv = apiKeyEnvFor(loaded.config)
  const names = new Set([
    ...loaded.secretKeys,
    ...(keyEnv === undefined ? [] : [keyEnv]),
    ...knownVariables,
    ...Object.keys(loaded.env).filter((name) => name.startsWith("KERN_"))
  ])
  return [...names]
    .filter((name) => loaded.env[name] !== undefined)
    .sort()
    .map((name) => ({
      name,
      value: maskValue(loaded.env[name] ?? ""),
      source: fromFile.has(name) ? ".kern/.env" : "environment"
    }))
}

const eventLine = (event: KernelEvent): string =>
  [
    new Date(event.tsMs).toISOString(),
    event.decisionKey,
    event.status,
    ...(event.toolId === undefined || event.toolId === null ? [] : [event.toolId]),
    `run=${event.runId}`,
    ...(event.latencyMs === undefined || event.latencyMs === null ? [] : [`${Math.round(event.latencyMs)}ms`]),
    ...(event.errorCode === undefined || event.errorCode === null ? [] : [`${event.errorCode}: ${event.errorMessage ?? ""}`])
  ].join(" ")

const logs = (limit: number) =>
  Effect.gen(function*() {
    const log = yield* EventLog
    const recent = yield* log.recent(limit).pipe(
      Effect.mapError((error) => toolFailure("UNEXPECTED", `could not read the kernel event log: ${error.message}`))
    )
    return [...recent].reverse().map(eventLine)
  })

const pairingLines = Effect.gen(function*() {
  const { config } = yield* AgentConfig
  const store = yield* PairingStore
  const pairings = yield* store.list.pipe(Effect.mapError((error) => toolFailure("UNEXPECTED", error.message)))
  if (pairings.length === 0) return "No channel users have paired or asked to pair."
  return ["Channel users:", ...pairings.map((p) =>
    `- ${userKey(p)}${p.displayName === "" ? "" : ` (${p.displayName})`}: ${p.status}${
      p.status === "pending"
        ? " (its code is not shown here: the user gives it to the operator)"
        : `, ${p.role}, tool scope ${effectiveScope(p, config.toolScope)}`
    }`)].join("\n")
})

/** kern_pair({ code }): approves a pending pairing code. */
export const kernPair = Effect.fn("kern.tools.kern_pair")(function*(args: KernPairArgs) {
  const ctx = yield* RunContext
  if (!seesEverything(ctx)) {
    return yield* toolFailure(
      "PERMISSION_DENIED",
      "approving a pairing decides who may talk to the agent: only the operator's conversation may do it, and this one is not the operator's"
    )
  }
  const store = yield* PairingStore
  const { changed, pairing } = yield* store.approve(args.code, `agent:${ctx.userSid || ctx.agentName}`).pipe(
    Effect.mapError((error) =>
      toolFailure(
        error.reason === "storage" ? "UNEXPECTED" : error.reason === "invalid_code" ? "VALIDATION_ERROR" : "NOT_FOUND",
        error.message
      )
    )
  )
  // kern.db holds the approval; USERS.md is its mirror, and a failure to update it does not undo the approval.
  const mirrored = yield* Effect.either(syncUsersFile)
  const note = mirrored._tag === "Left" ? ` (USERS.md was not updated: ${mirrored.left.message})` : ""
  const who = `${pairing.interface} user ${pairing.userId}${pairing.displayName === "" ? "" : ` (${pairing.displayName})`}`
  return { pairing, text: (changed ? `Approved ${who}.` : `${who} was already approved.`) + note }
})

const users = (loaded: LoadedConfig) =>
  Effect.gen(function*() {
    // Through the door: a USERS.md linked into .kern/ or out of the folder, or a FIFO, is refused.
    return yield* readAgentText("USERS.md", { roots: [loaded.paths.dir] }).pipe(
      orIfAbsent(() => undefined),
      Effect.mapError((error) => toolFailure("UNEXPECTED", `could not read USERS.md: ${error.message}`))
    )
  })

/** What stands for a pairing code in the kern tool's output. */
export const hiddenCode = "KERN-····"
const codeShape = /\bKERN-[A-HJ-NP-Z2-9]{4}\b/g
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** `text` with every pairing code (the pending ones in any case, anything shaped like one) replaced. */
const hideCodeText = (text: string, pending: ReadonlyArray<string>): string =>
  pending
    .reduce((out, code) => out.replace(new RegExp(escapeRegExp(code), "gi"), hiddenCode), text)
    .replace(codeShape, hiddenCode)

const hideCodes = (value: unknown, pending: ReadonlyArray<string>): unknown =>
  typeof value === "string"
    ? hideCodeText(value, pending)
    : Array.isArray(value)
    ? value.map((item) => hideCodes(item, pending))
    : typeof value === "object" && value !== null
    ? Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, hideCodes(inner, pending)]))
    : value

const pendingCodes = Effect.gen(function*() {
  const store = yield* PairingStore
  const pairings = yield* store.list.pipe(Effect.mapError((error) => toolFailure("UNEXPECTED", error.message)))
  return pairings.filter((p) => p.status === "pending").map((p) => p.code)
})

/**
 * kern({ action }): the runtime, its config, environment, recent kernel events and users, never a pairing code
 * (whatever the action): a code the model could read is one a prompt injection could approve. Config fields named
 * like secrets are masked here; secret values, wherever they stand, are redacted at the executor's door by the one
 * redactor (KnownSecrets), as in every tool's result.
 */
export const kern = Effect.fn("kern.tools.kern")(function*(args: KernArgs) {
  const loaded = yield* AgentConfig
  if (args.action === pairAction) {
    return yield* toolFailure(
      "VALIDATION_ERROR",
      "kern does not approve pairing codes: call kern_pair({ \"code\": \"KERN-XXXX\" }) with the code the operator gave " +
        "(it is the pairing tool, governed as the write it is)"
    )
  }
  if (operatorOnlyActions.has(args.action) && !seesEverything(yield* RunContext)) {
    return yield* toolFailure(
      "PERMISSION_DENIED",
      `kern ${args.action} is the operator's: it shows the operator's conversation, other users or their tool calls, ` +
        "and this conversation is not the operator's"
    )
  }
  const codes = yield* pendingCodes
  const scrub = (text: string) => hideCodeText(text, codes)
  const scrubData = (data: unknown) => hideCodes(maskSecretFields(data), codes)
  switch (args.action) {
    case "status": {
      const data = yield* status(loaded)
      return { action: args.action, status: scrubData(data), text: scrub(toYaml(data)) }
    }
    case "config": {
      const config = scrubData(loaded.config)
      return { action: args.action, config, text: JSON.stringify(config, null, 2) }
    }
    case "env": {
      const variables = envListing(loaded)
      const text = variables.length === 0
        ? "no provider, channel or KERN_* variables are set"
        : variables.map((v) => `${v.name}=${v.value} (${v.source})`).join("\n")
      return { action: args.action, variables: scrubData(variables), text: scrub(text) }
    }
    case "logs": {
      const lines = (yield* logs(args.limit ?? kernLogsDefault)).map(scrub)
      return { action: args.action, events: lines.length, text: lines.length === 0 ? "no kernel events yet" : lines.join("\n") }
    }
    case "users": {
      const content = yield* users(loaded)
      const body = content === undefined ? "USERS.md does not exist in the agent folder." : content.trimEnd()
      return { action: args.action, text: scrub(`${body}\n\n${yield* pairingLines}`) }
    }
  }
})
