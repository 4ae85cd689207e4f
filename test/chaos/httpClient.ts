import { Effect, Fiber, Ref } from "effect"
import { markerPattern } from "./echoModel.js"

/** How a POST /message ended for the client. */
export type PostOutcome =
  | { readonly _tag: "Accepted"; readonly turnId: string }
  /** The agent answered with an error (a full disk: 507 and its words). */
  | { readonly _tag: "Refused"; readonly status: number; readonly error: string }
  /** No answer at all (the agent was down, or died before answering): the client cannot know whether it was taken. */
  | { readonly _tag: "NoAnswer"; readonly error: string }

export interface HttpClientState {
  readonly outcomes: ReadonlyMap<string, PostOutcome>
  /** Replies the client got, by marker: live from the event stream, or read back from /history after a reconnect. */
  readonly live: ReadonlyMap<string, number>
  readonly recovered: ReadonlySet<string>
  /** The `error` events of turns, by turn id: what the client was told when a turn failed. */
  readonly errors: ReadonlyMap<string, string>
  readonly reconnects: number
}

const markersIn = (text: string) => [...text.matchAll(markerPattern)].map((m) => m[0])

/**
 * A client of kern's HTTP API as the web UI is: it posts messages and follows `GET /events`; when the stream breaks
 * (the agent was killed) it connects again and reads what it missed from `GET /history`.
 */
export const makeHttpClient = (address: () => { readonly base: string; readonly token: string }) =>
  Effect.gen(function*() {
    const state = yield* Ref.make<HttpClientState>({ outcomes: new Map(), live: new Map(), recovered: new Set(), errors: new Map(), reconnects: 0 })
    const headers = () => ({ authorization: `Bearer ${address().token}`, "content-type": "application/json" })

    /** One POST; a refused connection (nothing listens: the agent is down or starting) is tried again, as it was surely not taken. */
    const post = (marker: string, text: string, channel: string) =>
      Effect.promise(async (): Promise<PostOutcome> => {
        for (;;) {
          try {
            const response = await fetch(`${address().base}/message`, {
              method: "POST",
              headers: headers(),
              body: JSON.stringify({ text, channel })
            })
            const body = await response.json() as { turnId?: string; error?: string }
            return response.status === 202
              ? { _tag: "Accepted", turnId: body.turnId ?? "" }
              : { _tag: "Refused", status: response.status, error: body.error ?? "" }
          } catch (error) {
            const cause = error instanceof Error ? error.cause : undefined
            const code = typeof cause === "object" && cause !== null && "code" in cause ? cause.code : undefined
            if (code !== "ECONNREFUSED") return { _tag: "NoAnswer", error: String(cause ?? error) }
            await new Promise((resolve) => setTimeout(resolve, 300))
          }
        }
      }).pipe(Effect.tap((outcome) => Ref.update(state, (s) => ({ ...s, outcomes: new Map([...s.outcomes, [marker, outcome]]) }))))

    const sawReply = (reply: string) =>
      Ref.update(state, (s) => {
        const live = new Map(s.live)
        for (const marker of markersIn(reply)) live.set(marker, (live.get(marker) ?? 0) + 1)
        return { ...s, live }
      })

    /** Every assistant text of the current session, page by page (newest first). */
    const history = Effect.promise(async () => {
      const texts: Array<string> = []
      let before: number | null | undefined = undefined
      do {
        const query: string = before === undefined ? "" : `&before=${before}`
        const response = await fetch(`${address().base}/history?limit=500${query}`, { headers: headers() })
        if (response.status !== 200) return undefined
        const page = await response.json() as { messages: Array<{ message: { _tag: string; text?: string } }>; nextBefore: number | null }
        for (const item of page.messages) if (item.message._tag === "assistant") texts.push(item.message.text ?? "")
        before = page.nextBefore
      } while (before !== null)
      return texts
    }).pipe(Effect.catchAllDefect(() => Effect.succeed(undefined)))

    /** What the client missed while it was away. */
    const catchUp = Effect.gen(function*() {
      const texts = yield* history
      if (texts === undefined) return false
      yield* Ref.update(state, (s) => {
        const recovered = new Set(s.recovered)
        for (const text of texts) for (const marker of markersIn(text)) if (!s.live.has(marker)) recovered.add(marker)
        return { ...s, recovered }
      })
      return true
    })

    /** One connection to /events, read until it breaks; the finishes of turns go to `sawReply`. */
    const follow = Effect.async<void>((resume) => {
      const abort = new AbortController()
      void (async () => {
        try {
          const response = await fetch(`${address().base}/events`, { headers: headers(), signal: abort.signal })
          if (response.body === null || response.status !== 200) return
          const reader = response.body.getReader()
          const decoder = new TextDecoder()
          let buffer = ""
          for (;;) {
            const { done, value } = await reader.read()
            if (done) return
            buffer += decoder.decode(value, { stream: true })
            let end = buffer.indexOf("\n\n")
            while (end !== -1) {
              const frame = buffer.slice(0, end)
              buffer = buffer.slice(end + 2)
              const data = frame.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trim()).join("\n")
              if (data !== "") {
                const event = JSON.parse(data) as { type?: string; reply?: string; turnId?: string; message?: string }
                if (event.type === "finish" && typeof event.reply === "string") Effect.runSync(sawReply(event.reply))
                if (event.type === "error" && typeof event.turnId === "string") {
                  const { turnId, message } = event
                  Effect.runSync(Ref.update(state, (s) => ({ ...s, errors: new Map([...s.errors, [turnId, message ?? ""]]) })))
                }
              }
              end = buffer.indexOf("\n\n")
            }
          }
        } catch {
          // The agent went away: the loop connects again.
        } finally {
          resume(Effect.void)
        }
      })()
      return Effect.sync(() => abort.abort())
    })

    const loop = Effect.forever(Effect.gen(function*() {
      yield* Effect.fork(Effect.delay(catchUp, "200 millis"))
      yield* follow
      yield* Ref.update(state, (s) => ({ ...s, reconnects: s.reconnects + 1 }))
      yield* Effect.sleep("100 millis")
    }))
    const follower = yield* Effect.forkScoped(loop)

    return {
      post,
      state: Ref.get(state),
      /** Reads /history once more (the last word at the end of a run) and stops following. */
      finish: Effect.gen(function*() {
        while (!(yield* catchUp)) yield* Effect.sleep("200 millis")
        yield* Fiber.interrupt(follower)
      })
    } as const
  })

export type HttpClient = Effect.Effect.Success<ReturnType<typeof makeHttpClient>>
