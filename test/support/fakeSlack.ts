import { Clock, Effect, Option, Runtime, Stream, SubscriptionRef } from "effect"
import * as NodeHttp from "node:http"
import type * as NodeNet from "node:net"
import { type WebSocket, WebSocketServer } from "ws"

/**
 * A fake Slack, as far as a Socket Mode app sees it: the Web API (`POST /api/<method>`, JSON or form bodies, bearer
 * tokens checked: the bot token for chat.*, the app token for apps.connections.open) and the Socket Mode WebSocket
 * that `apps.connections.open` hands out (hello on connect, envelopes, acks by envelope_id, `disconnect`). Files as
 * Slack serves them: `files.info`, each file's private download URL (`GET /files-pri/<team>-<id>/download/<name>`,
 * the bot token as Bearer; without it Slack answers its sign-in page, HTML with 200), and upload v2
 * (`files.getUploadURLExternal` → a POST of the bytes to the URL it gives → `files.completeUploadExternal`). Listens on
 * 127.0.0.1, records every call and ack with the time on the test's Clock (downloads as method `download`, upload
 * POSTs as `upload`), and is scripted per test: rate limits, error answers, revoked tokens, disconnects, dropped
 * sockets, failing downloads.
 */

export interface SlackCall {
  readonly method: string
  readonly token: string
  readonly body: Readonly<Record<string, unknown>>
  /** When it arrived, on the test's Clock. */
  readonly atMs: number
}

export interface SlackAck {
  readonly envelopeId: string
  readonly atMs: number
  /** What `onAck` saw when the ack arrived (e.g. the inbox rows at that moment). */
  readonly probe: unknown
}

/** The next answer to a method instead of the normal one. */
export type SlackScript =
  | { readonly _tag: "RateLimited"; readonly retryAfterSeconds: number }
  | { readonly _tag: "Error"; readonly error: string }

/** How the next download answers instead of the file. */
export type DownloadScript =
  | { readonly _tag: "RateLimited"; readonly retryAfterSeconds: number }
  | { readonly _tag: "Status"; readonly status: number }
  /** Slack's sign-in page, HTML with 200, as Slack answers a download it does not authorize. */
  | { readonly _tag: "Html" }
  /** A redirect elsewhere (Slack's downloads never redirect; a hostile or broken one might). */
  | { readonly _tag: "Redirect"; readonly location: string }

/** A file Slack holds: what files.info and a file_share event say of it, and its bytes. */
export interface FakeFile {
  readonly id: string
  readonly name: string
  readonly mimetype: string
  readonly size: number
  readonly mode: string
  readonly bytes: Uint8Array
  readonly urlPrivateDownload: string
}

/** A file uploaded with upload v2 and completed into a conversation. */
export interface FakeUpload {
  readonly fileId: string
  readonly filename: string
  readonly title: string | undefined
  readonly bytes: Uint8Array
  readonly channel: string
  readonly threadTs: string | undefined
  readonly initialComment: string | undefined
}

export interface FakeSlackOptions {
  readonly botToken?: string
  readonly appToken?: string
  readonly botUserId?: string
  /** Called as each ack arrives, before it is recorded: a test looks at the world at that instant. */
  readonly onAck?: (envelopeId: string) => unknown
}

export interface Delivered {
  readonly envelopeId: string
  readonly eventId: string
  /** The same event again in a new envelope (Slack's retry of an unacknowledged one). */
  readonly payload: unknown
}

interface Posted {
  readonly channel: string
  text: string
  blocks: unknown
  readonly threadTs: string | undefined
}

const readBytes = (request: NodeHttp.IncomingMessage) =>
  new Promise<Buffer>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => resolve(Buffer.concat(chunks)))
    request.on("error", reject)
  })

/** What Slack answers a file download it does not authorize: its sign-in page. */
const signInPage = "<!DOCTYPE html><html><head><title>Slack</title></head><body>Sign in to Slack</body></html>"

const parseBody = (text: string, contentType: string): Record<string, unknown> => {
  if (text === "") return {}
  if (contentType.includes("application/json")) {
    const parsed: unknown = JSON.parse(text)
    return typeof parsed === "object" && parsed !== null ? { ...parsed } : {}
  }
  return Object.fromEntries(new URLSearchParams(text))
}

/** Slack's own limit on a message's text. */
const maxTextLength = 40_000

export const make = (options: FakeSlackOptions = {}) =>
  Effect.gen(function*() {
    const botToken = options.botToken ?? "xoxb-test-bot"
    const appToken = options.appToken ?? "xapp-test-app"
    const botUserId = options.botUserId ?? "UBOT"
    const runtime = yield* Effect.runtime<never>()
    const now = () => Runtime.runSync(runtime)(Clock.currentTimeMillis)
    const run = <A>(effect: Effect.Effect<A>) => Runtime.runFork(runtime)(effect)

    const calls = yield* SubscriptionRef.make<ReadonlyArray<SlackCall>>([])
    const acks = yield* SubscriptionRef.make<ReadonlyArray<SlackAck>>([])
    const connections = yield* SubscriptionRef.make(0)
    const scripts = new Map<string, Array<SlackScript>>()
    const messages = new Map<string, Posted>()
    const sockets = new Set<WebSocket>()
    const tickets = new Set<string>()
    let latest: WebSocket | undefined
    const files = new Map<string, FakeFile>()
    const downloadScripts: Array<DownloadScript> = []
    /** Upload slots handed out by files.getUploadURLExternal: their bytes once POSTed. */
    const slots = new Map<string, { readonly filename: string; readonly length: number; bytes: Uint8Array | undefined }>()
    const uploads = yield* SubscriptionRef.make<ReadonlyArray<FakeUpload>>([])
    let revoked = false
    let counter = 0
    const nextTs = () => `1700000000.${String(++counter).padStart(6, "0")}`

    const answer = (method: string, token: string, body: Record<string, unknown>, port: number): Record<string, unknown> => {
      if (token === "") return { ok: false, error: "not_authed" }
      const expected = method === "apps.connections.open" ? appToken : botToken
      if (revoked || token !== expected) return { ok: false, error: "invalid_auth" }
      const channel = typeof body["channel"] === "string" ? body["channel"] : undefined
      const text = typeof body["text"] === "string" ? body["text"] : undefined
      switch (method) {
        case "auth.test":
          return { ok: true, url: "https://kern-test.slack.com/", team: "kern-test", user: "kern", team_id: "T1", user_id: botUserId, bot_id: "B1" }
        case "apps.connections.open": {
          const ticket = `t${++counter}`
          tickets.add(ticket)
          return { ok: true, url: `ws://127.0.0.1:${port}/link/?ticket=${ticket}` }
        }
        case "chat.postMessage": {
          if (channel === undefined) return { ok: false, error: "channel_not_found" }
          if (text === undefined && body["blocks"] === undefined) return { ok: false, error: "no_text" }
          if ((text ?? "").length > maxTextLength) return { ok: false, error: "msg_too_long" }
          const ts = nextTs()
          const threadTs = typeof body["thread_ts"] === "string" ? body["thread_ts"] : undefined
          messages.set(ts, { channel, text: text ?? "", blocks: body["blocks"], threadTs })
          return { ok: true, channel, ts, message: { type: "message", user: botUserId, text, ts, thread_ts: threadTs } }
        }
        case "chat.update":
        case "chat.delete": {
          const ts = typeof body["ts"] === "string" ? body["ts"] : ""
          const message = messages.get(ts)
          if (message === undefined || message.channel !== channel) return { ok: false, error: "message_not_found" }
          if (method === "chat.delete") {
            messages.delete(ts)
          } else {
            if ((text ?? "").length > maxTextLength) return { ok: false, error: "msg_too_long" }
            message.text = text ?? message.text
            message.blocks = body["blocks"]
          }
          return { ok: true, channel, ts, text }
        }
        case "chat.postEphemeral":
          if (channel === undefined || typeof body["user"] !== "string") return { ok: false, error: "user_not_in_channel" }
          return { ok: true, message_ts: nextTs() }
        case "files.info": {
          const file = files.get(typeof body["file"] === "string" ? body["file"] : "")
          return file === undefined ? { ok: false, error: "file_not_found" } : { ok: true, file: fileObject(file) }
        }
        case "files.getUploadURLExternal": {
          const filename = typeof body["filename"] === "string" ? body["filename"] : ""
          const length = Number(body["length"])
          if (filename === "" || !Number.isInteger(length) || length <= 0) return { ok: false, error: "invalid_arguments" }
          const fileId = `F${++counter}`
          slots.set(fileId, { filename, length, bytes: undefined })
          return { ok: true, upload_url: `http://127.0.0.1:${port}/upload/v1/${fileId}`, file_id: fileId }
        }
        case "files.completeUploadExternal": {
          const listed = typeof body["files"] === "string" ? JSON.parse(body["files"]) as ReadonlyArray<{ id: string; title?: string }> : []
          const target = typeof body["channel_id"] === "string" ? body["channel_id"] : undefined
          const done: Array<FakeUpload> = []
          for (const entry of listed) {
            const slot = slots.get(entry.id)
            if (slot === undefined || slot.bytes === undefined) return { ok: false, error: "file_not_found" }
            if (slot.bytes.length !== slot.length) return { ok: false, error: "file_upload_size_mismatch" }
            done.push({
              fileId: entry.id,
              filename: slot.filename,
              title: entry.title,
              bytes: slot.bytes,
              channel: target ?? "",
              threadTs: typeof body["thread_ts"] === "string" ? body["thread_ts"] : undefined,
              initialComment: typeof body["initial_comment"] === "string" ? body["initial_comment"] : undefined
            })
          }
          for (const entry of listed) slots.delete(entry.id)
          run(SubscriptionRef.update(uploads, (all) => [...all, ...done]))
          return { ok: true, files: done.map((upload) => ({ id: upload.fileId, title: upload.title ?? upload.filename })) }
        }
        case "conversations.open":
          return typeof body["users"] === "string"
            ? { ok: true, channel: { id: `D${body["users"]}` } }
            : { ok: false, error: "users_list_not_supplied" }
        default:
          return { ok: false, error: "unknown_method" }
      }
    }

    /** A file as Slack's events and files.info describe it. */
    const fileObject = (file: FakeFile) => ({
      id: file.id,
      name: file.name,
      title: file.name,
      mimetype: file.mimetype,
      filetype: file.name.split(".").at(-1) ?? "binary",
      size: file.size,
      mode: file.mode,
      url_private: file.urlPrivateDownload.replace("/download/", "/"),
      url_private_download: file.urlPrivateDownload
    })

    const download = (request: NodeHttp.IncomingMessage, response: NodeHttp.ServerResponse, token: string) => {
      const id = /^\/files-pri\/T1-([A-Z0-9]+)\//.exec(request.url ?? "")?.[1] ?? ""
      run(SubscriptionRef.update(calls, (all) => [...all, { method: "download", token, body: { file: id }, atMs: now() }]))
      const file = files.get(id)
      const scripted = downloadScripts.shift()
      if (scripted?._tag === "RateLimited") {
        response.writeHead(429, { "content-type": "text/plain", "retry-after": String(scripted.retryAfterSeconds) })
        return response.end("rate limited")
      }
      if (scripted?._tag === "Status") {
        response.writeHead(scripted.status, { "content-type": "text/plain" })
        return response.end(`status ${scripted.status}`)
      }
      if (scripted?._tag === "Redirect") {
        response.writeHead(302, { location: scripted.location })
        return response.end()
      }
      if (scripted?._tag === "Html" || token !== botToken || revoked || file === undefined) {
        response.writeHead(200, { "content-type": "text/html; charset=utf-8" })
        return response.end(signInPage)
      }
      response.writeHead(200, { "content-type": file.mimetype, "content-length": String(file.bytes.length) })
      response.end(Buffer.from(file.bytes))
    }

    const upload = (request: NodeHttp.IncomingMessage, response: NodeHttp.ServerResponse, bytes: Buffer) => {
      const id = /^\/upload\/v1\/([A-Z0-9]+)$/.exec(request.url ?? "")?.[1] ?? ""
      const token = (request.headers.authorization ?? "").replace(/^Bearer\s+/i, "")
      run(SubscriptionRef.update(calls, (all) => [...all, { method: "upload", token, body: { file: id, bytes: bytes.length }, atMs: now() }]))
      const slot = slots.get(id)
      if (request.method !== "POST" || slot === undefined) {
        response.writeHead(404, { "content-type": "text/plain" })
        return response.end("not found")
      }
      slot.bytes = new Uint8Array(bytes)
      response.writeHead(200, { "content-type": "text/plain" })
      response.end(`OK - ${bytes.length}`)
    }

    const server = NodeHttp.createServer((request, response) => {
      void readBytes(request).then((raw) => {
        const token = (request.headers.authorization ?? "").replace(/^Bearer\s+/i, "")
        if ((request.url ?? "").startsWith("/files-pri/")) return download(request, response, token)
        if ((request.url ?? "").startsWith("/upload/")) return upload(request, response, raw)
        const text = raw.toString("utf8")
        const method = (request.url ?? "").replace(/^\/api\//, "").replace(/\?.*$/, "")
        const body = parseBody(text, request.headers["content-type"] ?? "")
        run(SubscriptionRef.update(calls, (all) => [...all, { method, token, body, atMs: now() }]))
        const scripted = scripts.get(method)?.shift()
        if (scripted?._tag === "RateLimited") {
          response.writeHead(429, { "content-type": "application/json", "retry-after": String(scripted.retryAfterSeconds) })
          response.end(JSON.stringify({ ok: false, error: "ratelimited" }))
          return
        }
        const port = (server.address() as NodeNet.AddressInfo).port
        const result = scripted?._tag === "Error" ? { ok: false, error: scripted.error } : answer(method, token, body, port)
        response.writeHead(200, { "content-type": "application/json; charset=utf-8" })
        response.end(JSON.stringify(result))
      })
    })

    const wss = new WebSocketServer({ noServer: true })
    server.on("upgrade", (request, socket, head) => {
      const url = new URL(request.url ?? "/", "http://127.0.0.1")
      const ticket = url.searchParams.get("ticket") ?? ""
      // A Socket Mode URL works once, as Slack's do.
      if (url.pathname !== "/link/" || !tickets.delete(ticket)) {
        socket.end("HTTP/1.1 401 Unauthorized\r\n\r\n")
        return
      }
      wss.handleUpgrade(request, socket, head, (ws) => {
        sockets.add(ws)
        latest = ws
        ws.on("close", () => sockets.delete(ws))
        ws.on("message", (data) => {
          const frame: unknown = JSON.parse(String(data))
          if (typeof frame === "object" && frame !== null && "envelope_id" in frame && typeof frame.envelope_id === "string") {
            const envelopeId = frame.envelope_id
            const probe = options.onAck?.(envelopeId)
            run(SubscriptionRef.update(acks, (all) => [...all, { envelopeId, atMs: now(), probe }]))
          }
        })
        ws.send(JSON.stringify({ type: "hello", num_connections: sockets.size, connection_info: { app_id: "A1" }, debug_info: { host: "fake" } }))
        run(SubscriptionRef.update(connections, (n) => n + 1))
      })
    })

    yield* Effect.acquireRelease(
      Effect.async<void>((resume) => {
        server.listen({ host: "127.0.0.1", port: 0 }, () => resume(Effect.void))
      }),
      () =>
        Effect.async<void>((resume) => {
          for (const ws of sockets) ws.terminate()
          wss.close()
          server.closeAllConnections()
          server.close(() => resume(Effect.void))
        })
    )
    const port = (server.address() as NodeNet.AddressInfo).port

    /** Sends an envelope on the newest connection; returns its id. */
    const deliver = (type: string, payload: unknown, retryAttempt = 0) =>
      Effect.suspend(() => {
        const ws = latest
        if (ws === undefined || ws.readyState !== ws.OPEN) return Effect.dieMessage("fake Slack: no open Socket Mode connection")
        const envelopeId = `env-${++counter}`
        ws.send(JSON.stringify({
          envelope_id: envelopeId,
          type,
          payload,
          accepts_response_payload: false,
          retry_attempt: retryAttempt,
          retry_reason: retryAttempt === 0 ? "" : "timeout"
        }))
        return Effect.succeed(envelopeId)
      })

    const event = (inner: Record<string, unknown>) =>
      Effect.sync(() => {
        const eventId = `Ev${++counter}`
        return { eventId, payload: { token: "verification", team_id: "T1", api_app_id: "A1", event: inner, type: "event_callback", event_id: eventId, event_time: 1700000000 } }
      })

    const sendEvent = (inner: Record<string, unknown>) =>
      Effect.flatMap(event(inner), ({ eventId, payload }) =>
        Effect.map(deliver("events_api", payload), (envelopeId): Delivered => ({ envelopeId, eventId, payload })))

    const awaitWhere = <A>(ref: SubscriptionRef.SubscriptionRef<A>, done: (value: A) => boolean) =>
      ref.changes.pipe(Stream.filter(done), Stream.runHead, Effect.map(Option.getOrThrow))

    const callsOf = (method: string) => Effect.map(SubscriptionRef.get(calls), (all) => all.filter((call) => call.method === method))

    return {
      port,
      apiUrl: `http://127.0.0.1:${port}/api/`,
      botToken,
      appToken,
      botUserId,
      calls: SubscriptionRef.get(calls),
      callsOf,
      acks: SubscriptionRef.get(acks),
      connections: SubscriptionRef.get(connections),
      /** Waits until `count` calls of `method` have arrived; returns them. */
      awaitCalls: (method: string, count: number) =>
        Effect.map(
          awaitWhere(calls, (all) => all.filter((call) => call.method === method).length >= count),
          (all) => all.filter((call) => call.method === method)
        ),
      /** Waits until a call of `method` matches. */
      awaitCall: (method: string, matches: (call: SlackCall) => boolean) =>
        Effect.map(
          awaitWhere(calls, (all) => all.some((call) => call.method === method && matches(call))),
          (all) => all.find((call) => call.method === method && matches(call))!
        ),
      /** Waits until any call matches. */
      awaitAnyCall: (matches: (call: SlackCall) => boolean) =>
        Effect.map(awaitWhere(calls, (all) => all.some(matches)), (all) => all.find(matches)!),
      awaitAck: (envelopeId: string) =>
        Effect.map(awaitWhere(acks, (all) => all.some((ack) => ack.envelopeId === envelopeId)), (all) =>
          all.find((ack) => ack.envelopeId === envelopeId)!),
      awaitConnections: (count: number) => awaitWhere(connections, (n) => n >= count),
      /** A message in the bot's DM channel `channel`, from `user`. */
      dm: (user: string, text: string, channel = `D${user}`) =>
        sendEvent({ type: "message", channel, channel_type: "im", user, text, ts: nextTs(), event_ts: nextTs() }),
      /** `<@bot> text` in a channel; in a thread when `threadTs` is given. */
      mention: (user: string, channel: string, text: string, threadTs?: string) =>
        Effect.flatMap(Effect.sync(nextTs), (ts) =>
          sendEvent({
            type: "app_mention",
            channel,
            user,
            text: `<@${botUserId}> ${text}`,
            ts,
            event_ts: ts,
            ...(threadTs === undefined ? {} : { thread_ts: threadTs })
          })),
      sendEvent,
      /** The same payload in a new envelope, as Slack retries an envelope nobody acknowledged. */
      redeliver: (delivered: Delivered) => deliver("events_api", delivered.payload, 1),
      /** A click on a Block Kit button of the message `ts` in `channel`. */
      click: (user: string, actionId: string, value: string, channel: string, ts: string) =>
        deliver("interactive", {
          type: "block_actions",
          user: { id: user, username: user, team_id: "T1" },
          api_app_id: "A1",
          container: { type: "message", message_ts: ts, channel_id: channel, is_ephemeral: false },
          channel: { id: channel, name: channel },
          message: { ts, text: messages.get(ts)?.text ?? "" },
          actions: [{ action_id: actionId, block_id: "b", value, type: "button", action_ts: "1700000000.1" }]
        }),
      /** Any frame text on the latest connection, as a broken or hostile peer might send it. */
      frame: (text: string) => Effect.sync(() => latest?.send(text)),
      /** Slack's `disconnect` frame: the app should move to a new connection. */
      disconnect: (reason = "refresh_requested") =>
        Effect.sync(() => latest?.send(JSON.stringify({ type: "disconnect", reason, debug_info: { host: "fake" } }))),
      /** Kills every socket without a close frame (a network drop). */
      drop: Effect.sync(() => {
        for (const ws of sockets) ws.terminate()
      }),
      /**
       * A file Slack holds, downloadable at its private URL with the bot token; returns what a file_share event carries
       * of it. `size` is what Slack says (default its bytes' length), `mimetype` what Slack guessed from the name.
       */
      addFile: (bytes: Uint8Array, options: { readonly name: string; readonly mimetype?: string; readonly size?: number; readonly mode?: string }) =>
        Effect.sync(() => {
          const id = `F${++counter}`
          const file: FakeFile = {
            id,
            name: options.name,
            mimetype: options.mimetype ?? "application/octet-stream",
            size: options.size ?? bytes.length,
            mode: options.mode ?? "hosted",
            bytes,
            urlPrivateDownload: `http://127.0.0.1:${port}/files-pri/T1-${id}/download/${encodeURIComponent(options.name)}`
          }
          files.set(id, file)
          return fileObject(file)
        }),
      /** A `file_share` message in the bot's DM with `user`: the files as the event carries them, and a text. */
      fileShare: (user: string, shared: ReadonlyArray<Record<string, unknown>>, text = "", channel = `D${user}`) =>
        Effect.flatMap(Effect.sync(nextTs), (ts) =>
          sendEvent({ type: "message", subtype: "file_share", channel, channel_type: "im", user, text, files: shared, ts, event_ts: ts })),
      /** The next downloads answer these instead of the file. */
      failDownloads: (...answers: ReadonlyArray<DownloadScript>) =>
        Effect.sync(() => {
          downloadScripts.push(...answers)
        }),
      /** Waits until `count` uploads were completed into conversations; returns them. */
      awaitUploads: (count: number) => awaitWhere(uploads, (all) => all.length >= count),
      uploads: SubscriptionRef.get(uploads),
      /** Answers the next calls of `method` with these instead. */
      script: (method: string, ...answers: ReadonlyArray<SlackScript>) =>
        Effect.sync(() => {
          scripts.set(method, [...(scripts.get(method) ?? []), ...answers])
        }),
      /** Every token stops working (`invalid_auth`), as when the app is uninstalled. */
      revoke: Effect.sync(() => {
        revoked = true
      }),
      /** The messages posted and not deleted, as they are now, with their ts, oldest first. */
      posted: Effect.sync(() => [...messages.entries()].map(([ts, message]) => ({ ts, ...message }))),
      /** A posted message as it is now (after updates); undefined once deleted. */
      message: (ts: string) => Effect.sync(() => messages.get(ts))
    } as const
  })

export type FakeSlack = Effect.Effect.Success<ReturnType<typeof make>>
