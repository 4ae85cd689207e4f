import * as NodeContext from "@effect/platform-node/NodeContext"
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Option } from "effect"
import type { LoadedConfig } from "../config/AgentConfig.js"
import { ProcessEnv } from "../config/ProcessEnv.js"
import type { AgentCapabilities } from "../kernel/contracts.js"
import { linkMedia } from "../media/mediaLinks.js"
import { NotesSummary } from "../memory/NotesSummary.js"
import { Recall } from "../recall/Recall.js"
import { ContextWindow } from "../context/ContextWindow.js"
import { openActiveSession } from "../runtime/activeSession.js"
import * as ContextCatchUp from "../runtime/ContextCatchUp.js"
import { agentRuntimeLayer, type ConfigSource, logReport, type Report } from "../runtime/layers.js"
import type { Attachment } from "../session/messages.js"
import { MessageQueue } from "../turn/MessageQueue.js"
import type { TurnEvent } from "../turn/TurnEvent.js"
import type { TurnFailure } from "../turn/TurnFailure.js"
import { makeRunTurn } from "../turn/runTurn.js"
import type { TurnOutcome } from "../turn/turnTally.js"
import { waitAtMost } from "../config/waitAtMost.js"

/**
 * One agent, embedded: the library's single entry. `Agent.layer({ dir })` builds the whole runtime (config, kern.db,
 * kernel and tools, the configured model, sessions, the queue, the turn runner) and holds the folder's lock for as
 * long as the layer lives; `Agent.send` runs one turn.
 */

export interface SendOptions {
  /** Who is speaking (default `operator`) and over what (default interface `library`, channel `library`). */
  readonly userId?: string | undefined
  readonly interface?: string | undefined
  readonly channel?: string | undefined
  /**
   * Each event of the turn as it happens (its message, steps, text deltas, tool calls and results, errors, finish with
   * the usage), each naming its turn and conversation: the events `GET /events` streams for a running agent's turns.
   */
  readonly onEvent?: ((event: TurnEvent) => Effect.Effect<void>) | undefined
  /** Files that come with the message, already in the media store (MediaStore.ingest / ingestFiles). */
  readonly attachments?: ReadonlyArray<Attachment> | undefined
}

export interface AgentService {
  /** The session turns are appended to. */
  readonly sessionId: string
  /**
   * Runs one turn for `text`; turns from several fibers run one after another, in order. A turn that ends without
   * the model's answer fails with its TurnFailure (provider, watchdog, budget, step limit, a session that could not
   * be written); what it did is still in the session, and `onEvent` saw its error and finish events.
   */
  readonly send: (text: string, options?: SendOptions) => Effect.Effect<TurnOutcome, TurnFailure>
}

export class Agent extends Context.Tag("kern/agent/Agent")<Agent, AgentService>() {}

export interface AgentOptions {
  /** The environment the agent sees under `.kern/.env` (provider keys, overrides): pass `process.env` to inherit. */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined
  /** Start a new session instead of continuing the newest. */
  readonly newSession?: boolean | undefined
  /** How long to wait while another runtime holds the folder (default 60 s); then the layer fails with AgentBusy. */
  readonly waitSeconds?: number | undefined
  /** What holds the folder, as others see it (default `kern library`). */
  readonly command?: string | undefined
  /** Where notices go (config warnings, waiting for the lock); logged as warnings by default. */
  readonly report?: Report | undefined
  /**
   * What the agent declares it may use (seed 002): only the tools its `toolAllowlist` matches (all when empty) and none
   * above its `safetyClassCeiling` are offered or run, on top of the config's `safetyMode` and `tools` (the narrower
   * wins).
   */
  readonly capabilities?: AgentCapabilities | undefined
}

/**
 * The agent over services already built (the CLI's `kern chat` builds them with its own reporting). When its scope
 * closes it waits, 30 s at most, for a notes summary a turn started, so a one-shot use leaves it made.
 */
export const make = (
  options: {
    readonly newSession?: boolean | undefined
    readonly report?: Report | undefined
    /**
     * Nothing in this process catches the summaries up (`kern chat`, which builds no ContextCatchUp): a session far
     * behind them is read from its raw window only.
     */
    readonly oneShot?: boolean | undefined
  } = {}
) =>
  Effect.gen(function*() {
    const runTurn = yield* makeRunTurn
    const queue = yield* MessageQueue
    const summary = yield* NotesSummary
    const report = options.report ?? logReport
    const { problems, session } = yield* openActiveSession({ fresh: options.newSession === true, oneShot: options.oneShot === true })
    for (const problem of problems) yield* report(`warning: ${problem}`)
    const recall = yield* Recall
    yield* Effect.addFinalizer(() => summary.settled())
    // Segments and summaries a turn started are finished before the folder is let go (30 s at most).
    const context = yield* ContextWindow
    yield* Effect.addFinalizer(() => context.settled())
    // A one-shot use (`kern chat`) leaves its turns findable by the next `kern recall search`: the session's new
    // lines are indexed before the folder is let go (never during a turn), 30 s at most.
    // Cut anywhere, the index is whole: its writes are transactions, and the next pass reads on from the last.
    yield* Effect.addFinalizer(() =>
      waitAtMost(recall.syncSession(session.id), "30 seconds").pipe(
        Effect.flatMap(Option.match({
          onNone: () => report("recall: indexing this session took over 30 s; the next run catches up"),
          onSome: () => Effect.void
        })),
        Effect.catchTag("RecallError", (error) => report(`recall: ${error.message}`))
      )
    )
    const oneAtATime = yield* Effect.makeSemaphore(1)
    const sql = yield* SqlClient.SqlClient
    const send = (text: string, options: SendOptions = {}) =>
      oneAtATime.withPermits(1)(
        Effect.gen(function*() {
          const attachments = options.attachments ?? []
          const queued = yield* queue.offer({
            interface: options.interface ?? "library",
            channel: options.channel ?? "library",
            userId: options.userId ?? "operator",
            text,
            ...(attachments.length === 0 ? {} : { attachments })
          })
          // Its files belong to its conversation from now on, as the runtime links a channel's (AgentRuntime.submit).
          if (attachments.length > 0) {
            yield* linkMedia(attachments.map((file) => file.id), queued.conversation).pipe(
              Effect.provideService(SqlClient.SqlClient, sql),
              Effect.catchAll((error) => report(`could not link the files of a message to its conversation: ${error.message}`))
            )
          }
          const onEvent = options.onEvent ?? (() => Effect.void)
          const outcome = yield* runTurn({ session: () => Effect.succeed(session), emit: (_message, event) => onEvent(event) })
          if (outcome.failure !== undefined) return yield* Effect.fail(outcome.failure)
          return outcome
        })
      )
    return Agent.of({ sessionId: session.id, send })
  })

// An embedded agent lives as long as its program: the summaries of a session far behind are built in the background.
const build = (source: ConfigSource, options: AgentOptions) =>
  Layer.merge(Layer.scoped(Agent, make(options)), ContextCatchUp.worker).pipe(
    Layer.provide(agentRuntimeLayer(source, {
      command: options.command ?? "kern library",
      waitSeconds: options.waitSeconds ?? 60,
      report: options.report,
      capabilities: options.capabilities
    })),
    Layer.provide(NodeContext.layer),
    Layer.provide(Layer.succeed(ProcessEnv, options.env ?? {}))
  )

/** The agent of the folder `dir`, on Node. */
export const layer = (options: AgentOptions & { readonly dir: string }) => build(options.dir, options)

/** The agent of a configuration already loaded (`AgentConfig.loadConfig`), on Node. */
export const layerFromConfig = (loaded: LoadedConfig, options: AgentOptions = {}) => build(loaded, options)

/** Runs one turn on the agent in context. */
export const send = (text: string, options?: SendOptions) => Effect.flatMap(Agent, (agent) => agent.send(text, options))
