import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodeHttp from "node:http"
import type { AddressInfo } from "node:net"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { initAgentWithModel } from "../support/agentFolder.js"
import { kernBin, runCollected } from "../support/cli.js"

// What a real `kern status` process sends the running agent it asks (src/quick/statusAsk.ts): the variables the
// report reads (src/config/reportEnvironment.ts), not a secret of its environment the report has no use for. The
// "agent" here is a loopback server that records the request, named by the folder's lock with this process as holder.

describe("kern status sends a running agent only the variables the report reads", () => {
  it.live("an unrelated secret of the environment is not in the request; KERN_*, the key config.json names are", () =>
    Effect.acquireUseRelease(
      Effect.promise(() =>
        new Promise<{ readonly server: NodeHttp.Server; readonly bodies: Array<string> }>((resolve) => {
          const bodies: Array<string> = []
          const server = NodeHttp.createServer((req, res) => {
            let body = ""
            req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")))
            req.on("end", () => {
              bodies.push(body)
              res.writeHead(200, { "content-type": "application/json" })
              res.end(JSON.stringify({ stdout: "reported", failure: null }))
            })
          })
          server.listen(0, "127.0.0.1", () => resolve({ server, bodies }))
        })
      ),
      ({ bodies, server }) =>
        Effect.gen(function*() {
          const dir = initAgentWithModel("http://127.0.0.1:9/v1", { apiKeyEnv: "MY_OWN_KEY" })
          const { port } = server.address() as AddressInfo
          NodeFs.writeFileSync(
            NodePath.join(dir, ".kern", "agent.lock"),
            JSON.stringify({ pid: process.pid, startedAt: new Date().toISOString(), host: NodeOs.hostname(), command: "kern test", address: `http://127.0.0.1:${port}` })
          )
          NodeFs.appendFileSync(NodePath.join(dir, ".kern", ".env"), "KERN_AUTH_TOKEN=t0123456789\n")
          const result = yield* Effect.promise(() =>
            runCollected(process.execPath, [kernBin, "status", dir], {
              env: { AWS_SECRET_ACCESS_KEY: "aws-secret-value", MY_OWN_KEY: "mine", KERN_NAME: "named", TELEGRAM_BOT_TOKEN: "1:a" }
            })
          )
          expect(result.stdout, result.stderr).toBe("reported\n")
          expect(bodies).toHaveLength(1)
          const sent = JSON.parse(bodies[0]!) as { readonly env: Record<string, string> }
          expect(sent.env).toEqual({ MY_OWN_KEY: "mine", KERN_NAME: "named", TELEGRAM_BOT_TOKEN: "1:a" })
          expect(bodies[0]).not.toContain("aws-secret-value")
        }),
      ({ server }) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
    ))
})
