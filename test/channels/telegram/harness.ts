import * as NodeContext from "@effect/platform-node/NodeContext"
import { SqlClient } from "@effect/sql"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import * as NodePath from "node:path"
import { AgentRuntime } from "../../../src/runtime/AgentRuntime.js"
import * as InboxSql from "../../../src/runtime/Inbox.js"
import * as Layers from "../../../src/runtime/layers.js"
import { Questions } from "../../../src/tools/Questions.js"
import { Approvals } from "../../../src/runtime/Approvals.js"
import { Channels } from "../../../src/tools/Channels.js"
import * as TelegramChannel from "../../../src/channels/telegram/TelegramChannel.js"
import { ProcessEnv } from "../../../src/config/ProcessEnv.js"
import { PairingStore } from "../../../src/users/PairingStore.js"
import type { FakeModelServerShape } from "../../support/fakeModelServer.js"
import type { FakeTelegram, FakeUser } from "../../support/fakeTelegram.js"
import { makeTempDir, writeFiles } from "../../support/tempDir.js"

/** A fresh agent folder on the fake model. */
export const agentFolder = (model: FakeModelServerShape, config: Record<string, unknown> = {}) => {
  const dir = NodePath.join(makeTempDir(), "agent")
  writeFiles(dir, {
    ".kern/config.json": JSON.stringify({ model: "m", baseURL: model.baseURL, heartbeatInterval: 0, autoCommit: false, recall: false, ...config })
  })
  return dir
}

export interface AgentOptions {
  /** Serve the queue (default true); false leaves accepted messages queued. */
  readonly serve?: boolean
  /** Replaces the runtime the channel sees (to stop it at a chosen point). */
  readonly wrapRuntime?: (runtime: AgentRuntime) => AgentRuntime
  /** Leave TELEGRAM_BOT_TOKEN unset. */
  readonly noToken?: boolean
}

/**
 * A real running agent over `dir` with the Telegram channel on the fake Bot API, built in a scope of its own so a test
 * can kill it (close the scope) and start another over the same folder.
 */
export const startAgent = (dir: string, telegram: FakeTelegram, options: AgentOptions = {}) =>
  Effect.gen(function*() {
    const hold = { command: "kern test", waitSeconds: 5 }
    const runtimeSeen = options.wrapRuntime === undefined
      ? Layer.empty
      : Layer.effect(AgentRuntime, Effect.map(AgentRuntime, options.wrapRuntime))
    const channel = TelegramChannel.layer.pipe(Layer.provide(runtimeSeen), Layer.provideMerge(InboxSql.layerSql))
    // Attached before the agent serves (runningAgentLayerWith); without serving, over the agent's core alone.
    const agent = options.serve === false
      ? channel.pipe(Layer.provideMerge(Layers.runningAgentCoreLayer(dir, hold)))
      : Layers.runningAgentLayerWith(dir, hold, channel)
    const layer = agent.pipe(
      Layer.provide(Layer.succeed(ProcessEnv, {
        OPENROUTER_API_KEY: "sk-test",
        ...(options.noToken === true ? {} : { TELEGRAM_BOT_TOKEN: telegram.token }),
        TELEGRAM_API_ROOT: telegram.root
      })),
      Layer.provide(NodeContext.layer)
    )
    const scope = yield* Scope.make()
    // A failing test still stops the agent before its fakes go.
    yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
    const context = yield* Layer.buildWithScope(layer, scope)
    const runtime = Context.get(context, AgentRuntime)
    return {
      runtime,
      inbox: Context.get(context, InboxSql.Inbox),
      pairings: Context.get(context, PairingStore),
      approvals: Context.get(context, Approvals),
      questions: Context.get(context, Questions),
      channels: Context.get(context, Channels),
      sql: Context.get(context, SqlClient.SqlClient),
      /** Kills the agent: every fiber interrupted, wherever it was. */
      stop: Scope.close(scope, Exit.void)
    }
  })

export type RunningAgent = Effect.Effect.Success<ReturnType<typeof startAgent>>

/** Pairs a Telegram user as the operator would (`kern pair`), optionally promoting them. */
export const pair = (agent: RunningAgent, user: FakeUser, operator = false) =>
  Effect.gen(function*() {
    const pairing = yield* agent.pairings.request({ interface: "telegram", userId: String(user.id), chatId: String(user.id) })
    yield* agent.pairings.approve(pairing.code, "operator")
    if (operator) yield* agent.pairings.promote(`telegram:${user.id}`)
  })

/** Waits (polling kern.db, bounded) until `count` placeholders are remembered: the moment a kill leaves them behind. */
export const awaitPlaceholders = (agent: RunningAgent, count: number) =>
  Effect.gen(function*() {
    for (let tries = 0; tries < 1000; tries++) {
      const rows = yield* agent.sql<{ readonly n: number }>`SELECT count(*) AS n FROM reply_placeholders`
      if ((rows[0]?.n ?? 0) >= count) return
      yield* Effect.sleep("10 millis")
    }
    return yield* Effect.dieMessage(`${count} reply placeholders never appeared in kern.db`)
  })
