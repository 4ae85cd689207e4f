import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, Layer, Option } from "effect"
import * as NodeFs from "node:fs"
import { agentPaths } from "../../src/config/paths.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import { keptLive, slackKeptLive, telegramKeptLive } from "../../src/host/keptLive.js"
import { readPassive } from "../../src/host/wakeSources/passiveRead.js"
import { testAgentDir } from "../support/testAgentDir.js"

// The one rule for which hosted agents are kept live: Slack always, Telegram only among several runners (a single
// `kern serve` polls a passive agent's bot with its shared poller instead), and the passive read follows it.

const read = (dir: string, clustered: boolean) =>
  readPassive(dir, clustered).pipe(Effect.provide(Layer.merge(NodeContext.layer, Layer.succeed(ProcessEnv, {}))))

describe("what kern serve keeps live", () => {
  it("Slack always; Telegram among several runners only; neither, nothing", () => {
    const slack = { SLACK_BOT_TOKEN: "xoxb-1", SLACK_APP_TOKEN: "xapp-1" }
    const telegram = { TELEGRAM_BOT_TOKEN: "1:abc" }
    expect(keptLive(slack, false)).toEqual(Option.some(slackKeptLive))
    expect(keptLive({ ...slack, ...telegram }, true)).toEqual(Option.some(slackKeptLive))
    expect(keptLive(telegram, false)).toEqual(Option.none())
    expect(keptLive(telegram, true)).toEqual(Option.some(telegramKeptLive))
    expect(keptLive({ TELEGRAM_BOT_TOKEN: "  " }, true)).toEqual(Option.none())
    expect(keptLive({}, true)).toEqual(Option.none())
  })

  it.scoped("a passive Telegram agent: watched by the shared poller on one host; kept live and due now among runners", () =>
    Effect.gen(function*() {
      const dir = testAgentDir()
      NodeFs.appendFileSync(agentPaths(dir).envFile, "\nTELEGRAM_BOT_TOKEN=1:abc\n")
      const alone = yield* read(dir, false)
      expect(alone.keptLive).toEqual(Option.none())
      expect(alone.dueMs).toEqual(Option.none())
      expect(Option.map(alone.telegram, (t) => t.token)).toEqual(Option.some("1:abc"))
      const now = yield* Clock.currentTimeMillis
      const among = yield* read(dir, true)
      expect(among.keptLive).toEqual(Option.some(telegramKeptLive))
      expect(among.dueMs).toEqual(Option.some(now))
      expect(among.why).toBe(`kept live: ${telegramKeptLive}`)
    }))
})
