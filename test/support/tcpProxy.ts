import { createConnection, createServer, type Socket } from "node:net"

/**
 * A TCP proxy on 127.0.0.1 in front of a real server, to cut a browser's connections the way a network does (no
 * goodbye) and to refuse new ones for a while. It records the head of each request that passes, so a test can see
 * what the browser sent (Last-Event-ID on a reconnect).
 */
export interface TcpProxy {
  readonly port: number
  /** Destroys every open connection; new ones are refused (closed at once) for `refuseMs`. */
  readonly cut: (refuseMs: number) => void
  /** The first line and headers of every request seen, in order. */
  readonly heads: ReadonlyArray<string>
  readonly close: () => Promise<void>
}

export const startTcpProxy = (targetPort: number): Promise<TcpProxy> =>
  new Promise((resolve, reject) => {
    const open = new Set<Socket>()
    const heads: Array<string> = []
    let refuseUntil = 0
    const server = createServer((client) => {
      if (Date.now() < refuseUntil) return client.destroy()
      const upstream = createConnection({ host: "127.0.0.1", port: targetPort })
      open.add(client)
      open.add(upstream)
      client.on("data", (chunk: Buffer) => {
        const text = chunk.toString("latin1")
        const end = text.indexOf("\r\n\r\n")
        if (/^[A-Z]+ \S+ HTTP\/1\.1\r\n/.test(text) && end !== -1) heads.push(text.slice(0, end))
      })
      client.pipe(upstream)
      upstream.pipe(client)
      const drop = () => {
        client.destroy()
        upstream.destroy()
        open.delete(client)
        open.delete(upstream)
      }
      client.on("error", drop).on("close", drop)
      upstream.on("error", drop).on("close", drop)
    })
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      resolve({
        port: typeof address === "object" && address !== null ? address.port : 0,
        cut: (refuseMs) => {
          refuseUntil = Date.now() + refuseMs
          for (const socket of open) socket.destroy()
          open.clear()
        },
        heads,
        close: () =>
          new Promise((done) => {
            for (const socket of open) socket.destroy()
            server.close(() => done())
          })
      })
    })
  })
