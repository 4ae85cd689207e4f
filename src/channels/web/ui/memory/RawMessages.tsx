import { useEffect, useRef, useState } from "preact/hooks"
import { getJson, mapLoaded, query } from "../http.js"
import { decodePage, type Raw } from "./responses.js"

/** Messages per page: small, since one message (a tool's output) can be large. */
const pageSize = 20
/** Characters of a message shown before "show all". */
const previewChars = 1500

const RawMessage = ({ message, target }: { readonly message: Raw; readonly target: boolean }) => {
  const [full, setFull] = useState(false)
  const long = message.text.length > previewChars
  return (
    <li class={`raw raw-${message.role.split(" ")[0]}${target ? " raw-target" : ""}`} aria-current={target ? "true" : undefined}>
      <div class="raw-head">
        <span class="raw-index">#{message.index}</span> <strong>{message.role}</strong> <time>{message.at}</time>
      </div>
      <pre class="raw-text">{full || !long ? message.text : `${message.text.slice(0, previewChars)}…`}</pre>
      {long && !full && (
        <button type="button" class="link" onClick={() => setFull(true)}>Show all {message.text.length.toLocaleString()} characters</button>
      )}
    </li>
  )
}

/**
 * A session's messages, newest first, a page at a time: the next older page loads when the end of the list scrolls
 * into view (or on the button, for keyboards), so a long session never loads whole. `before` bounds the range (a
 * segment's last message + 1); `after` stops at a segment's first message. `highlight` marks a recall hit's messages,
 * scrolled into view once they load.
 */
export const RawMessages = (
  { session, before, after, highlight }: {
    readonly session: string
    readonly before?: number | undefined
    readonly after?: number | undefined
    readonly highlight?: { readonly start: number; readonly end: number } | undefined
  }
) => {
  const [messages, setMessages] = useState<ReadonlyArray<Raw>>([])
  const [cursor, setCursor] = useState<number | undefined>(before)
  const [done, setDone] = useState(false)
  const [loading, setLoading] = useState(false)
  const [error, setError] = useState<string | undefined>(undefined)
  const sentinel = useRef<HTMLLIElement>(null)
  const list = useRef<HTMLOListElement>(null)
  const shownTarget = useRef(false)
  const isTarget = (m: Raw) => highlight !== undefined && m.index >= highlight.start && m.index <= highlight.end

  const loadMore = async () => {
    if (loading || done) return
    setLoading(true)
    const loaded = mapLoaded(await getJson(`/history${query({ session, limit: pageSize, before: cursor })}`), decodePage)
    setLoading(false)
    if (loaded._tag !== "Ok") {
      setError(loaded._tag === "Failed" ? loaded.message : "history is not built")
      setDone(true)
      return
    }
    const page = after === undefined ? loaded.value.messages : loaded.value.messages.filter((m) => m.index >= after)
    setMessages((shown) => [...shown, ...page])
    setCursor(loaded.value.before)
    setDone(loaded.value.before === undefined || (after !== undefined && loaded.value.before <= after))
  }

  useEffect(() => {
    void loadMore()
  }, [])

  useEffect(() => {
    if (shownTarget.current || highlight === undefined) return
    // The newest of the hit's messages (the list runs newest first), with the rest of the hit below it.
    const first = list.current?.querySelector(".raw-target")
    if (first === null || first === undefined) return
    shownTarget.current = true
    first.scrollIntoView({ block: "start" })
  }, [messages])

  useEffect(() => {
    const el = sentinel.current
    if (el === null || done) return
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) void loadMore()
    })
    observer.observe(el)
    return () => observer.disconnect()
  }, [done, loading, cursor])

  return (
    <div class="raw-list" aria-label="Raw messages">
      <ol reversed ref={list}>
        {messages.map((m) => <RawMessage key={m.index} message={m} target={isTarget(m)} />)}
        {!done && (
          <li ref={sentinel} class="raw-more">
            <button type="button" class="link" onClick={() => void loadMore()} disabled={loading}>
              {loading ? "Loading…" : "Load older messages"}
            </button>
          </li>
        )}
      </ol>
      {error !== undefined && <p class="failed" role="alert">{error}</p>}
      {done && messages.length === 0 && error === undefined && <p class="muted">No messages.</p>}
    </div>
  )
}
