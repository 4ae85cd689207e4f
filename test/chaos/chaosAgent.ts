import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { processRunning } from "../../src/storage/processState.js"
import { initAgentWithModel } from "../support/agentFolder.js"
import { recordedPid, pidFileOf } from "../support/backgroundAgent.js"
import { runKern } from "../support/cli.js"
import type { FakeSlack } from "../support/fakeSlack.js"
import type { FakeTelegram, FakeUser } from "../support/fakeTelegram.js"
import setupBuild from "../support/globalSetup.js"
import { fakePeersEnv } from "../support/fakePeers.js"

/** A background agent (`kern start`) on the fakes, which the chaos runs kill and start again. */
export interface ChaosAgent {
  readonly dir: string
  readonly env: Record<string, string>
  /** `kern start`; fails with kern's stderr when it does not start. */
  readonly start: Effect.Effect<number>
  /** kill -9 of the running agent, waiting until it is gone; false when none ran. */
  readonly killNine: Effect.Effect<boolean>
  readonly stop: Effect.Effect<void>
  /** The agent's HTTP root and auth token (from config.json and .env). */
  readonly http: () => { readonly base: string; readonly token: string }
  readonly kern: (args: ReadonlyArray<string>) => Effect.Effect<{ status: number | null; stdout: string; stderr: string }>
}

/** Builds the test kern (as the test suite does: only when the sources changed) and makes an agent folder for it. */
export const makeChaosAgent = (modelURL: string, telegram: FakeTelegram, slack: FakeSlack, config: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    yield* Effect.sync(setupBuild)
    const dir = initAgentWithModel(modelURL, { recall: false, heartbeatInterval: 0, autoCommit: false, ...config })
    const env = fakePeersEnv(telegram, slack)
    const kern = (args: ReadonlyArray<string>) => Effect.promise(() => runKern([...args, dir], { env }))
    const running = () => NodeFs.existsSync(pidFileOf(dir)) && processRunning(recordedPid(dir))
    const start = Effect.gen(function*() {
      const result = yield* kern(["start"])
      if (result.status !== 0) return yield* Effect.dieMessage(`kern start failed (${result.status}): ${result.stderr}`)
      return recordedPid(dir)
    })
    const killNine = Effect.gen(function*() {
      if (!NodeFs.existsSync(pidFileOf(dir))) return false
      const pid = recordedPid(dir)
      if (!processRunning(pid)) return false
      process.kill(pid, "SIGKILL")
      while (processRunning(pid)) yield* Effect.sleep("20 millis")
      return true
    })
    const stop = Effect.gen(function*() {
      if (!running()) return
      const result = yield* kern(["stop"])
      if (result.status !== 0) yield* Effect.logWarning(`kern stop: ${result.stderr}`)
    })
    const http = () => {
      const settings = JSON.parse(NodeFs.readFileSync(NodePath.join(dir, ".kern/config.json"), "utf8")) as { port: number }
      const token = /KERN_AUTH_TOKEN=(\S+)/.exec(NodeFs.readFileSync(NodePath.join(dir, ".kern/.env"), "utf8"))?.[1] ?? ""
      return { base: `http://127.0.0.1:${settings.port}`, token }
    }
    // Whatever happens, no agent outlives the run.
    yield* Effect.addFinalizer(() => Effect.asVoid(killNine))
    return { dir, env, start, killNine, stop, http, kern } satisfies ChaosAgent
  })

const pairingCode = (text: string) => /kern pair (KERN-[A-Z0-9]{4})/.exec(text)?.[1]

/** A Telegram user asks to pair and the operator approves the code with `kern pair`, as a person would. */
export const pairTelegram = (agent: ChaosAgent, telegram: FakeTelegram, user: FakeUser) =>
  Effect.gen(function*() {
    yield* telegram.message({ from: user, text: "hello" })
    const messages = yield* telegram.awaitChat(user.id, (all) => all.some((m) => pairingCode(m.text) !== undefined))
    const code = messages.map((m) => pairingCode(m.text)).find((c) => c !== undefined) ?? ""
    const paired = yield* agent.kern(["pair", code])
    if (paired.status !== 0) return yield* Effect.dieMessage(`kern pair ${code}: ${paired.stderr}`)
  })

/** A Slack user DMs the bot, gets a code, and the operator approves it. */
export const pairSlack = (agent: ChaosAgent, slack: FakeSlack, user: string) =>
  Effect.gen(function*() {
    yield* slack.awaitConnections(1)
    yield* slack.dm(user, "hello")
    const call = yield* slack.awaitCall("chat.postMessage", (c) => c.body["channel"] === `D${user}` && pairingCode(String(c.body["text"])) !== undefined)
    const code = pairingCode(String(call.body["text"])) ?? ""
    const paired = yield* agent.kern(["pair", code])
    if (paired.status !== 0) return yield* Effect.dieMessage(`kern pair ${code}: ${paired.stderr}`)
  })
