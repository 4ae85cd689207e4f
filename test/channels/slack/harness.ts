import { SqlClient } from "@effect/sql"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Context, Effect, Layer, TestClock } from "effect"
import * as NodePath from "node:path"
import { AgentRuntime } from "../../../src/runtime/AgentRuntime.js"
import { Questions } from "../../../src/tools/Questions.js"
import { Approvals } from "../../../src/runtime/Approvals.js"
import { Inbox } from "../../../src/runtime/Inbox.js"
import * as InboxSql from "../../../src/runtime/Inbox.js"
import * as Layers from "../../../src/runtime/layers.js"
import { Channels } from "../../../src/tools/Channels.js"
import * as SlackChannel from "../../../src/channels/slack/SlackChannel.js"
import { ProcessEnv } from "../../../src/config/ProcessEnv.js"
import { PairingStore } from "../../../src/users/PairingStore.js"
import type { FakeModelServerShape } from "../../support/fakeModelServer.js"
import type { FakeSlack } from "../../support/fakeSlack.js"
import { makeTempDir, writeFiles } from "../../support/tempDir.js"

/** A new agent folder on the fake model. */
export const agentFolder = (model: FakeModelServerShape, config: Record<string, unknown> = {}) => {
  const dir = NodePath.join(makeTempDir(), "agent")
  writeFiles(dir, {
    ".kern/config.json": JSON.stringify({ model: "m", baseURL: model.baseURL, heartbeatInterval: 0, autoCommit: false, recall: false, ...config })
  })
  return dir
}

export interface SlackAgentOptions {
  readonly dir: string
  readonly slack: FakeSlack
  /** Extra environment (e.g. a token left out by setting it to ""). */
  readonly env?: Record<string, string>
  /** Serve the queue (default true). */
  readonly serve?: boolean
}

/**
 * A real agent (kern.db, sessions, kernel, runtime) on the fake model with the Slack channel on top, talking to the
 * fake Slack: built in the caller's scope, serving its queue (unless `serve: false`).
 */
export const startSlackAgent = (options: SlackAgentOptions) =>
  Effect.gen(function*() {
    // The runtime keeps its inbox to itself; the channel's is the same table through the same SqlClient.
    const channel = SlackChannel.layer.pipe(Layer.provideMerge(InboxSql.layerSql))
    const hold = { command: "kern test", waitSeconds: 0 }
    // Attached before the agent serves (runningAgentLayerWith); without serving, over the agent's core alone.
    const agent = options.serve === false
      ? channel.pipe(Layer.provideMerge(Layers.runningAgentCoreLayer(options.dir, hold)))
      : Layers.runningAgentLayerWith(options.dir, hold, channel)
    const layer = agent.pipe(
      Layer.provide(Layer.succeed(ProcessEnv, {
        OPENROUTER_API_KEY: "sk-test",
        SLACK_BOT_TOKEN: options.slack.botToken,
        SLACK_APP_TOKEN: options.slack.appToken,
        SLACK_API_URL: options.slack.apiUrl,
        ...options.env
      })),
      Layer.provide(NodeContext.layer)
    )
    const context = yield* Layer.build(layer)
    const runtime = Context.get(context, AgentRuntime)
    return {
      runtime,
      channels: Context.get(context, Channels),
      pairings: Context.get(context, PairingStore),
      approvals: Context.get(context, Approvals),
      questions: Context.get(context, Questions),
      inbox: Context.get(context, Inbox),
      /** kern.db, for what a test does behind the agent's back. */
      sql: Context.get(context, SqlClient.SqlClient)
    }
  })

/** Pairs a Slack user (as the operator would with `kern pair`), optionally promoting them to operator. */
export const pairUser = (pairings: PairingStore, userId: string, role: "user" | "operator" = "user") =>
  Effect.gen(function*() {
    const pairing = yield* pairings.request({ interface: "slack", userId, chatId: `D${userId}` })
    yield* pairings.approve(pairing.code, "operator")
    if (role === "operator") yield* pairings.promote(`slack:${userId}`)
  }).pipe(Effect.orDie)

const realPause = (ms: number) => Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, ms)))

/**
 * Runs `effect` while moving the TestClock a second at a time (a real 50 ms apart): for waits whose exact instant a
 * test does not assert (a final update after the spacing, a reconnect after its backoff).
 */
export const advanceUntil = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.raceFirst(effect, Effect.forever(Effect.zipRight(realPause(50), TestClock.adjust("1 second"))))

export const textOf = (call: { readonly body: Readonly<Record<string, unknown>> }) => String(call.body["text"])

/**
 * Waits, moving the clock, until a reply with this text went out: as the update of its placeholder, or posted
 * directly when the turn ended before its placeholder was up.
 */
export const awaitReply = (slack: FakeSlack, text: string) =>
  advanceUntil(slack.awaitAnyCall((call) =>
    (call.method === "chat.update" || call.method === "chat.postMessage") && textOf(call) === text
  ))
