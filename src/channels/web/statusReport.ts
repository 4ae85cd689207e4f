// What `kern status` shows, gathered and rendered in one place for both of its paths: the command line's own reads
// (src/cli/status.ts: the config, kern.db, the lock, and the running agent over HTTP) and the running agent's
// POST /status/report (handlers/status.ts: the same reads in the agent's process, its live state from itself), which
// lets `kern status` of a running agent load almost nothing (src/quick/statusAsk.ts). What differs between the two
// is passed in (StatusSources): the text and JSON are made by the same code, so they are the same.
import { FileSystem } from "@effect/platform"
import { Clock, type Context, Effect, Option, Schema } from "effect"
import { loadConfig, type LoadedConfig } from "../../config/AgentConfig.js"
import { databaseTarget, type DatabaseTarget } from "../../config/database.js"
import { summarizerLine } from "../../context/summarizerStatus.js"
import { providerProblems } from "../../config/providers.js"
import * as LockFile from "../../storage/LockFile.js"
import { orIfMissing } from "../../storage/missingFile.js"
import { costCapProblem } from "../../model/pricing.js"
import { nextSpendDayMs, spendDayIn } from "../../model/spendCaps.js"
import { spendLines, spendStatusOf } from "../../model/spendStatus.js"
import { NotAnAgentFolder } from "../../config/errors.js"
import * as HostedMark from "../../storage/HostedMark.js"
import { formatUptime, hostedLine, type HostedView } from "../hostedLine.js"
import { counted } from "../../config/counted.js"
import { heartbeatStatus } from "../../runtime/HeartbeatLog.js"
import { localIso } from "../../session/envelope.js"
import { neutralizeControls } from "../terminalSafe.js"
import { embeddingLine, indexLine } from "../../recall/format.js"
import { RecallStats } from "../../recall/schema.js"
import { codeIsLive, userKey } from "../../users/PairingStore.js"
import { describeState } from "../../mcp/McpServerState.js"
import { runningJobLines, runningJobsOf, runningSubAgentLines, runningSubAgentsOf } from "../../tools/runningWork.js"
import type { StatusResponse } from "./api.js"
import type { KeptReads, StoredStores } from "./statusStored.js"
import { channelLine, channelStates, formatBytes, heartbeatLine, scheduleLine } from "./statusLines.js"

/**
 * What the report shows of the running agent's GET /status: its uptime, how many approvals wait, its channels,
 * summarizer and MCP servers (the rest of it, kern.db's figures, the report reads from kern.db).
 */
export type LiveView = Pick<StatusResponse, "channels" | "summarizer" | "mcpServers"> & {
  readonly runtime: Pick<StatusResponse["runtime"], "uptimeMs" | "approvals">
}

/** What the running agent says of itself: its address and pid, its GET /status, what waits for approval by id. */
export interface LiveStatus {
  readonly server: Option.Option<{ readonly url: string; readonly pid: number }>
  readonly status: Option.Option<LiveView>
  readonly waiting: ReadonlyArray<{ readonly id: string; readonly toolId: string; readonly userId: string; readonly expiresAt: string }>
}

/** A hosted agent's host and its state there, with what went wrong asking. */
export interface HostedStatus {
  readonly view: HostedView | null
  readonly problems: ReadonlyArray<string>
}

/** What the two paths of `kern status` get in their own ways. */
export interface StatusSources<E, R> {
  /** The kern serve that hosts the folder, asked only when the folder has a hosted mark. */
  readonly hosted: (loaded: LoadedConfig) => Effect.Effect<HostedStatus, E, R>
  /** The running agent, asked only while a live process holds the folder's lock (`holder`). */
  readonly live: (loaded: LoadedConfig, holder: LockFile.LockHolder) => Effect.Effect<LiveStatus, E, R>
  /**
   * kern.db and its stores as this process already holds them, when the report's `target` is the database it holds
   * (the running agent: its connection, statements prepared, and its stores); undefined to open it for the report.
   */
  readonly stores?: (target: DatabaseTarget) => Context.Context<StoredStores> | undefined
  /** Where `stores` answers: its reads of kern.db's rows kept while kern.db is unchanged (statusStored.ts KeptReads). */
  readonly kept?: KeptReads | undefined
  /** How the folder's config is loaded: `loadConfig`, or a loader that keeps its last decode (the running agent's). */
  readonly loadConfig?: typeof loadConfig
}

/** The command's output (stdout, without its last newline) and, when it lists problems, the failure it ends with. */
export interface StatusOutput {
  readonly stdout: string
  readonly failure: string | null
  /**
   * Until when the clock leaves this output as it is (the spend's day ends, a pairing code expires), as long as the
   * files and environment it was made from stay the same; null when it also shows what no file holds (a running
   * agent, a host, a PostgreSQL database) or a read that failed (kern.db locked a moment). `kern status` keeps such an output for the next ask (src/quick/statusCache.ts).
   */
  readonly steadyUntilMs: number | null
}

const fileSize = (fs: FileSystem.FileSystem, file: string) =>
  fs.stat(file).pipe(Effect.map((info) => Number(info.size)), orIfMissing(() => 0))

/**
 * `kern status` of the folder `dir` (as the user named it, relative to `cwd` when given, else to this process's
 * folder), as text or JSON.
 */
export const statusOutput = <E, R>(
  where: { readonly dir: string; readonly cwd?: string | undefined },
  json: boolean,
  sources: StatusSources<E, R>
) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const loaded = yield* (sources.loadConfig ?? loadConfig)(where.dir, where.cwd)
    const dir = where.dir
    const { config, paths } = loaded
    if (!loaded.fileExists) return yield* new NotAnAgentFolder({ dir })
    const costCap = costCapProblem(config)
    const problems: Array<string> = [
      ...loaded.warnings,
      ...providerProblems(config, loaded.env),
      ...(costCap === undefined ? [] : [costCap])
    ]
    // The database and its WAL together are what the agent occupies on disk.
    const sizes = yield* Effect.either(
      Effect.all([fileSize(fs, paths.dbFile), fileSize(fs, `${paths.dbFile}-wal`)])
    )
    if (sizes._tag === "Left") problems.push(`cannot read ${paths.dbFile}: ${sizes.left.message}`)
    const dbBytes = sizes._tag === "Right" ? sizes.right[0] + sizes.right[1] : 0
    // Where kern.db's tables are: the SQLite file, or the agent's schema on PostgreSQL (`database.url`, shown without its password).
    const target = yield* Effect.either(databaseTarget(config, loaded.env, paths.dbFile))
    if (target._tag === "Left") problems.push(target.left.message)
    const database = target._tag === "Left"
      ? { kind: "unusable" as const }
      : target.right._tag === "postgres"
      ? { kind: "postgres" as const, url: target.right.shown, schema: target.right.schema }
      : { kind: "sqlite" as const, file: paths.dbFile }
    // kern.db's reads, with their database, loaded only when it may hold something (statusStored.ts).
    const stored = target._tag === "Left" || (target.right._tag === "sqlite" && dbBytes === 0)
      ? undefined
      : yield* Effect.flatMap(
        Effect.promise(() => import("./statusStored.js")),
        (module) => module.storedReads(target.right, sources.stores?.(target.right), sources.kept)
      )
    // Today's spend against the caps (limits), from the ledger the agent keeps in kern.db.
    const dayAt = yield* Clock.currentTimeMillis
    const day = spendDayIn(dayAt, config.timezone)
    const fromDb = stored === undefined ? undefined : yield* Effect.either(stored.usageAndHeartbeat(day))
    const usage = fromDb?._tag === "Right" ? fromDb.right[0] : null
    const spend = spendStatusOf(day, config.limits, fromDb?._tag === "Right" ? fromDb.right[2] : [])
    if (fromDb?._tag === "Left") problems.push(fromDb.left.message)
    // Channel users waiting for `kern pair <code>`, their code still live.
    const now = yield* Clock.currentTimeMillis
    const pairingRows = stored === undefined ? undefined : yield* Effect.either(stored.pairings)
    if (pairingRows?._tag === "Left") problems.push(pairingRows.left.message)
    const livePairings = (pairingRows?._tag === "Right" ? pairingRows.right : [])
      .filter((pairing) => pairing.status === "pending" && codeIsLive(pairing, now))
    const pendingPairings = livePairings.map((pairing) => ({ id: userKey(pairing), name: pairing.displayName, code: pairing.code }))
    const heartbeat = heartbeatStatus(config, fromDb?._tag === "Right" ? fromDb.right[1] : undefined)
    // Schedules, and the runs they missed while the agent was down (kern schedule list names them).
    const scheduleSummary = fromDb?._tag === "Right" ? fromDb.right[3] : undefined
    const schedules = scheduleSummary === undefined ? null : {
      count: scheduleSummary.schedules,
      active: scheduleSummary.active,
      missed: scheduleSummary.missed,
      lastMissed: scheduleSummary.lastMissedMs === null ? null : localIso(scheduleSummary.lastMissedMs, config.timezone)
    }
    // The kern serve that hosts the folder (its mark, src/storage/HostedMark.ts), and the agent's state there: asked of
    // the host's own routes, so a passive agent stays asleep (its kern.db is read here, as for any agent not running).
    const hosted = (yield* HostedMark.read(paths.kernDir)).length === 0
      ? { view: null, problems: [] }
      : yield* sources.hosted(loaded)
    problems.push(...hosted.problems)
    // Who runs the agent now: the live holder of the folder's lock (a lock left by a dead process reads as none).
    const holder = yield* Effect.either(LockFile.readHolder(paths.lockFile))
    if (holder._tag === "Left") problems.push(holder.left.message)
    const recallFigures = stored === undefined || !config.recall
      ? undefined
      : yield* Effect.either(stored.recall(loaded, holder._tag === "Right" && Option.isSome(holder.right)))
    if (recallFigures?._tag === "Left") problems.push(recallFigures.left.message)
    const recall = recallFigures?._tag === "Right" ? encodeRecall(recallFigures.right) : null
    const runtime = holder._tag === "Right" && Option.isSome(holder.right)
      ? { pid: holder.right.value.pid, command: holder.right.value.command, since: holder.right.value.startedAt }
      : null
    // Background jobs and sub-agents, from kern.db: running while the agent runs; rows a stopped agent left `running`
    // are not (their processes died with it) and are reported as interrupted when it starts again.
    const runningRows = stored === undefined ? undefined : yield* Effect.either(stored.running)
    if (runningRows?._tag === "Left") problems.push(runningRows.left.message)
    const [jobRows, subagentRows] = runningRows?._tag === "Right" ? runningRows.right : [[], []]
    const jobs = runtime === null ? null : runningJobsOf(jobRows, now)
    const subagents = runtime === null ? null : runningSubAgentsOf(subagentRows, now)
    const leftRunning = runtime === null ? [
      ...(jobRows.length === 0 ? [] : [counted(jobRows.length, "background job")]),
      ...(subagentRows.length === 0 ? [] : [counted(subagentRows.length, "sub-agent")])
    ] : []
    // The running agent's server: its address and uptime, from its own /status; what waits, by id, from its GET
    // /approvals. Its HTTP client is loaded only while a live process holds the lock (src/cli/statusLive.ts).
    // A hosted agent is asked only while its host says it is live: a request to one that has just gone passive (its
    // lock read a moment before) would wake it.
    const asleepAtHost = hosted.view !== null && hosted.view.state !== "live"
    const live: LiveStatus = runtime === null || asleepAtHost || holder._tag === "Left" || Option.isNone(holder.right)
      ? { server: Option.none(), status: Option.none(), waiting: [] }
      : yield* sources.live(loaded, holder.right.value)
    const liveStatus = live.status
    const server = Option.isSome(live.server)
      ? {
        url: live.server.value.url,
        pid: live.server.value.pid,
        uptimeMs: Option.isSome(liveStatus) ? liveStatus.value.runtime.uptimeMs : null
      }
      : null
    const channels = channelStates(loaded.env, Option.map(liveStatus, (live) => live.channels))
    const approvals = Option.isSome(liveStatus) ? liveStatus.value.runtime.approvals : null
    const waiting = live.waiting
    // The summarizer: as the running agent sees it, else as kern.db last recorded it.
    const liveSummary = Option.flatMap(liveStatus, (status) => Option.fromNullable(status.summarizer))
    const storedSummary = Option.isSome(liveSummary) || stored === undefined
      ? undefined
      : yield* Effect.either(stored.summary(loaded))
    if (storedSummary?._tag === "Left") problems.push(storedSummary.left.message)
    const summarizer = Option.isSome(liveSummary) ? liveSummary.value : storedSummary?._tag === "Right" ? storedSummary.right : null
    // MCP servers: as the running agent sees them; only how many are configured while none runs.
    const mcpServers = Option.isSome(liveStatus) ? liveStatus.value.mcpServers ?? [] : null
    const configured = Object.keys(config.mcpServers)
    const mcpLines = mcpServers !== null
      ? mcpServers.map((server) => `${"mcp".padEnd(11)}${server.name}: ${describeState(server)}`)
      : configured.length === 0
      ? []
      : [`mcp:       ${counted(configured.length, "server")} configured (${configured.join(", ")}); their state shows while the agent runs`]
    const status = {
      dir: paths.dir,
      name: config.name,
      provider: config.provider,
      model: config.model ?? null,
      agentFolder: loaded.fileExists,
      problems,
      dbBytes,
      database,
      usage,
      heartbeat,
      schedules,
      runtime,
      hosted: hosted.view,
      server,
      recall,
      channels,
      approvals,
      pendingApprovals: waiting,
      pendingPairings,
      summarizer,
      mcpServers,
      jobs,
      subagents,
      spend
    }
    // What the clock changes: the spend's day, the pending codes' expiry; a live agent or a host, at any moment.
    // A read that failed may not fail again (kern.db locked a moment, a file being replaced): not steady either.
    const readFailed = [sizes, fromDb, pairingRows, holder, recallFigures, runningRows, storedSummary].some((read) => read?._tag === "Left")
    const steadyUntilMs = runtime !== null || hosted.view !== null || database.kind === "postgres" || readFailed
      ? null
      : Math.min(nextSpendDayMs(dayAt, config.timezone), ...livePairings.map((pairing) => pairing.expiresAtMs ?? Infinity))
    if (json) return { stdout: JSON.stringify(status), failure: problemsFailure(problems, "in \"problems\""), steadyUntilMs } satisfies StatusOutput
    const lines = [
      `name:      ${status.name}`,
      `folder:    ${status.dir}`,
      `provider:  ${status.provider}`,
      `model:     ${status.model ?? "(not set)"}`,
      `running:   ${runtime === null ? "no" : `pid ${runtime.pid} (${runtime.command}) since ${runtime.since}`}`,
      ...(hosted.view === null ? [] : [`hosted:    ${hostedLine(hosted.view)}`]),
      ...(server === null ? [] : [`server:    ${server.url}${server.uptimeMs === null ? "" : `, up ${formatUptime(server.uptimeMs)}`}`]),
      `database:  ${
        database.kind === "postgres"
          ? `PostgreSQL ${database.url}, schema ${database.schema}`
          : database.kind === "sqlite"
          ? `${formatBytes(dbBytes)} (SQLite, ${database.file})`
          : "unusable (see problems)"
      }`,
      usage === null || usage.turns === 0
        ? "usage:     no turns yet"
        : `usage:     ${counted(usage.turns, "turn")}, ${usage.inputTokens} in (${usage.cachedInputTokens} cached) / ${usage.outputTokens} out tokens, ${usage.costUsdCents.toFixed(2)}¢`,
      ...spendLines(spend).map((line, i) => `${i === 0 ? "spend:     " : "           "}${line}`),
      `heartbeat: ${heartbeatLine(heartbeat)}`,
      ...(schedules === null || schedules.count === 0 ? [] : [`schedules: ${scheduleLine(schedules)}`]),
      ...(jobs === null ? [] : runningJobLines(jobs).map(neutralizeControls)),
      ...(subagents === null ? [] : runningSubAgentLines(subagents).map(neutralizeControls)),
      ...(leftRunning.length === 0 ? [] : [
        `left:      ${leftRunning.join(" and ")} the agent's last run left unfinished (reported as interrupted when it starts)`
      ]),
      ...channels.map((channel) => `${`${channel.interface}:`.padEnd(11)}${channelLine(channel)}`),
      ...(approvals === null || approvals === 0 ? [] : [
        `approvals: ${approvals} waiting (kern approvals lists them; kern approve <id> / kern deny <id>)`,
        ...waiting.map((pending) => `  ${pending.id} ${pending.toolId}, asked by ${pending.userId}, denied at ${pending.expiresAt} unanswered`)
      ]),
      ...(pendingPairings.length === 0 ? [] : [
        `pairings:  ${pendingPairings.length} waiting (kern pair <code>)`,
        ...pendingPairings.map((pairing) => `  ${pairing.code} ${pairing.id}${pairing.name === "" ? "" : ` (${neutralizeControls(pairing.name)})`}`)
      ]),
      ...(summarizer === null ? [] : [`summaries: ${summarizerLine(summarizer)}`]),
      ...mcpLines,
      `recall:    ${!config.recall ? "off (\"recall\": false)" : recallFigures?._tag === "Right" ? `${indexLine(recallFigures.right)}; embeddings: ${embeddingLine(recallFigures.right)}` : "nothing indexed yet"}`,
      problems.length === 0 ? "problems:  none" : `problems:\n${problems.map((problem) => `  - ${problem}`).join("\n")}`
    ]
    return { stdout: lines.join("\n"), failure: problemsFailure(problems, "above"), steadyUntilMs } satisfies StatusOutput
  }).pipe(Effect.scoped)

/** Scripts can rely on the exit code (`kern status && kern start`): it fails whenever a problem is listed. */
const problemsFailure = (problems: ReadonlyArray<string>, where: string): string | null =>
  problems.length === 0 ? null : `${counted(problems.length, "problem")} listed ${where}`

const encodeRecall = Schema.encodeSync(RecallStats)
