import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Ref } from "effect"
import { blockedPortWarning } from "../../src/channels/web/blockedPorts.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import { runHost } from "../../src/host/Host.js"
import { makeTempDir } from "../support/tempDir.js"

const env = Layer.merge(NodeContext.layer, Layer.succeed(ProcessEnv, {}))

describe("kern serve on a port browsers refuse", () => {
  it.live("says so when it starts, naming where the port is set; on another port it says nothing", () =>
    Effect.gen(function*() {
      const said = yield* Ref.make<ReadonlyArray<string>>([])
      const serve = (port: number) =>
        runHost({
          settings: { agents: [], host: "127.0.0.1", port, idleSeconds: 0 },
          home: makeTempDir(),
          report: (line) => Ref.update(said, (all) => [...all, line]),
          webRoot: makeTempDir("kern-web-")
        }).pipe(Effect.scoped, Effect.provide(env))
      yield* serve(0)
      expect(yield* Ref.get(said)).toEqual([])
      // Not 4190, which serverSetup.test.ts listens on, maybe at the same time.
      yield* serve(6679)
      const warning = `warning: ${blockedPortWarning(6679, `--port, or "port" in host.json`)}`
      expect(yield* Ref.get(said)).toContain(warning)
    }))
})
