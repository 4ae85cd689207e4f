import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodeNet from "node:net"
import { freePort } from "./freePort.js"

const ephemeralStart = Number(NodeFs.readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0])

const listenOn = (port: number) =>
  Effect.acquireRelease(
    Effect.async<NodeNet.Server, Error>((resume) => {
      const server = NodeNet.createServer()
      server.once("error", (error) => resume(Effect.fail(error)))
      server.listen({ host: "127.0.0.1", port }, () => resume(Effect.succeed(server)))
    }),
    (server) =>
      Effect.async<void>((resume) => {
        server.close(() => resume(Effect.void))
      })
  )

describe("freePort", () => {
  it.scoped("gives ports below the OS's ephemeral range that a server can listen on, never one in use", () =>
    Effect.gen(function*() {
      const taken = new Set<number>()
      for (let i = 0; i < 20; i++) {
        const port = yield* freePort
        expect(port).toBeGreaterThanOrEqual(10_000)
        expect(port).toBeLessThan(ephemeralStart)
        expect(taken.has(port)).toBe(false)
        // Held for the rest of the test: a later call must not hand it out again.
        yield* listenOn(port)
        taken.add(port)
      }
    }))
})
