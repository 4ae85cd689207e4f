import { Effect } from "effect"
import * as NodeHttp from "node:http"
import type { AddressInfo } from "node:net"

export type Handler = (request: NodeHttp.IncomingMessage, response: NodeHttp.ServerResponse) => void

/** A real HTTP server on 127.0.0.1 for the scope of a test; routes by path. */
export const testServer = (routes: Readonly<Record<string, Handler>>) =>
  Effect.acquireRelease(
    Effect.async<{ readonly server: NodeHttp.Server; readonly origin: string }>((resume) => {
      const server = NodeHttp.createServer((request, response) => {
        const route = routes[new URL(request.url ?? "/", "http://x").pathname]
        if (route === undefined) {
          response.writeHead(404, { "content-type": "text/plain" }).end("no such page")
        } else {
          route(request, response)
        }
      })
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        resume(Effect.succeed({ server, origin: `http://127.0.0.1:${port}` }))
      })
    }),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  )
