import { Effect } from "effect"
import * as NodeNet from "node:net"

export interface RawAnswer {
  readonly status: number
  readonly head: string
  readonly body: string
}

/**
 * One HTTP/1.1 request written byte for byte on a socket, as `curl --path-as-is` sends it: fetch() and URL would
 * resolve dot segments and re-encode the target before it leaves, so the server would never see the forms under test.
 * The request asks the server to close the connection after its answer; the answer is read until it does.
 */
export const rawRequest = (port: number, lines: { readonly method?: string; readonly target: string; readonly headers: ReadonlyArray<string> }) =>
  Effect.async<RawAnswer, Error>((resume) => {
    const socket = NodeNet.connect({ host: "127.0.0.1", port })
    const chunks: Array<Buffer> = []
    socket.on("data", (chunk) => chunks.push(chunk))
    socket.on("error", (error) => resume(Effect.fail(error)))
    socket.on("close", () => {
      const text = Buffer.concat(chunks).toString("latin1")
      const split = text.indexOf("\r\n\r\n")
      const head = split === -1 ? text : text.slice(0, split)
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? "0")
      resume(Effect.succeed({ status, head, body: split === -1 ? "" : text.slice(split + 4) }))
    })
    socket.on("connect", () => {
      // Written, not ended: a half-closed socket reads as a client gone away, and the server drops its answer.
      socket.write([`${lines.method ?? "GET"} ${lines.target} HTTP/1.1`, ...lines.headers, "Connection: close", "", ""].join("\r\n"), "latin1")
    })
    return Effect.sync(() => socket.destroy())
  })

/**
 * Spellings of `path` that are not canonical: each either names the route through a detour (`/./`, `/x/../`,
 * encoded dots and slashes, a backslash), or names an open route to a URL parser and this one to a router (`;`), or
 * ends in a form a parser drops (`;`, `/.`, a trailing `/`).
 */
export const nonCanonical = (path: string): ReadonlyArray<string> => {
  const rest = path.slice(1)
  const last = path.at(-1) ?? "x"
  return [
    `${path};`,
    `${path};/../health`,
    // As many `..` as the path has segments: the parser lands on /health whatever the route's depth.
    `${path};${"/..".repeat(path.split("/").length - 1)}/health`,
    `${path};jsessionid=1`,
    `${path};/..`,
    `/health;/..${path}`,
    `/./${rest}`,
    `${path}/.`,
    `${path}/./`,
    `/health/..${path}`,
    `/health/../${rest}`,
    `/x/y/../..${path}`,
    `${path}/..`,
    `${path}/../${rest}`,
    `/${path}`,
    `${path}//`,
    `/health//..${path}`,
    `/%2e/${rest}`,
    `/%2E/${rest}`,
    `/%2e%2e/${rest}`,
    `/health/%2E%2E${path}`,
    `/health/.%2e${path}`,
    `/health/%2e.${path}`,
    `${path}/%2e`,
    `/health%2f..%2f${rest}`,
    `/health%2F..%2F${rest}`,
    `${path}%2f`,
    `/%2F${rest}`,
    `/health%5c..%5c${rest}`,
    `/health%5C..%5C${rest}`,
    `/health\\..\\${rest}`,
    `/\\${rest}`,
    `${path}\\`,
    `/./health/%2e%2e/;/..${path}`,
    `/health/.;/..${path}`,
    `/%2e/health/..\\..${path}`,
    `${path}/`,
    `${path}%3b`,
    `${path.slice(0, -1)}%${last.charCodeAt(0).toString(16)}`,
    `${path}%00`,
    `${path}%252e`,
    `${path}#`,
    `http://127.0.0.1${path}`
  ]
}

/**
 * A response body read as raw text, as it comes off the socket: `readUntil(done)` reads on until the text read by this
 * call satisfies `done` (or the stream ends) and returns that text; `cancel` lets the stream go.
 */
export const rawBodyReader = (response: Response) => {
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  const readUntil = (done: (text: string) => boolean) =>
    Effect.promise(async () => {
      let text = ""
      while (!done(text)) {
        const chunk = await reader.read()
        if (chunk.done) break
        text += decoder.decode(chunk.value, { stream: true })
      }
      return text
    })
  const cancel = Effect.promise(() => reader.cancel())
  return { readUntil, cancel } as const
}
