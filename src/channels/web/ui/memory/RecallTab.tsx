import { useState } from "preact/hooks"
import { getJson, type Loaded, mapLoaded, query } from "../http.js"
import { arr, isObject, type Json, num, obj, str } from "../wire.js"
import { LoadedView } from "./LoadedView.js"
import { RawMessages } from "./RawMessages.js"
import { useLoaded } from "./useLoaded.js"

const isoDate = /^\d{4}-\d{2}-\d{2}T/

/**
 * The stats route's figures (recall's RecallStats: messages, chunks, sessions, files, from, to, …): every number,
 * date and flag at the top level, and how embeddings are made.
 */
const decodeStats = (u: Json | undefined): ReadonlyArray<readonly [string, string]> | undefined => {
  if (!isObject(u)) return undefined
  const figures = Object.entries(u).flatMap(([key, value]): ReadonlyArray<readonly [string, string]> =>
    typeof value === "number"
      ? [[key, value.toLocaleString()]]
      : typeof value === "string"
      ? [[key, isoDate.test(value) ? new Date(value).toLocaleString() : value]]
      : typeof value === "boolean"
      ? [[key, value ? "yes" : "no"]]
      : []
  )
  const embedding = obj(u, "embedding")
  const mode = embedding && str(embedding, "mode")
  const model = embedding && str(embedding, "model")
  return mode === undefined ? figures : [...figures, ["embedding", model === undefined ? mode : `${mode} (${model})`]]
}

interface Hit {
  readonly text: string
  readonly meta: string
  /** A conversation hit's messages, to page in on demand. */
  readonly range?: { readonly session: string; readonly start: number; readonly end: number } | undefined
}

const decodeHits = (u: Json | undefined): ReadonlyArray<Hit> | undefined => {
  const list = Array.isArray(u) ? u : isObject(u) ? arr(u, "results").length > 0 ? arr(u, "results") : arr(u, "hits") : undefined
  if (list === undefined) return undefined
  return list.filter(isObject).map((h) => {
    const session = str(h, "sessionId")
    const start = num(h, "messageStart")
    const end = num(h, "messageEnd")
    return {
      text: str(h, "text") ?? JSON.stringify(h),
      meta: ["source", "sessionId", "path", "startedAt", "score", "distance"]
        .flatMap((k) => typeof h[k] === "string" || typeof h[k] === "number" ? [`${k} ${String(h[k])}`] : [])
        .join(" · "),
      range: session !== undefined && start !== undefined && end !== undefined ? { session, start, end } : undefined
    }
  })
}

const HitView = ({ hit }: { readonly hit: Hit }) => {
  const [open, setOpen] = useState(false)
  return (
    <li>
      <div class="muted">{hit.meta}</div>
      <pre class="raw-text">{hit.text}</pre>
      {hit.range !== undefined && (
        open
          ? <RawMessages session={hit.range.session} before={hit.range.end + 1} after={hit.range.start} />
          : <button type="button" class="link" onClick={() => setOpen(true)}>Show messages {hit.range.start}–{hit.range.end}</button>
      )}
    </li>
  )
}

const label = (key: string) => key.replace(/([A-Z])/g, " $1").toLowerCase()

export const RecallTab = () => {
  const { loaded: stats } = useLoaded("/recall/stats", decodeStats)
  const [q, setQ] = useState("")
  const [hits, setHits] = useState<Loaded<ReadonlyArray<Hit>> | undefined>(undefined)
  const [searched, setSearched] = useState(false)

  const search = async () => {
    if (q.trim().length === 0) return
    setSearched(true)
    setHits(undefined)
    setHits(mapLoaded(await getJson(`/recall/search${query({ q: q.trim(), limit: 20 })}`), decodeHits))
  }

  return (
    <div class="recall">
      <LoadedView loaded={stats} what="recall statistics">
        {(figures) => (
          <dl class="figures">
            {figures.map(([k, v]) => (
              <div key={k}>
                <dt>{label(k)}</dt>
                <dd>{v}</dd>
              </div>
            ))}
          </dl>
        )}
      </LoadedView>
      <form
        class="search"
        role="search"
        onSubmit={(e) => {
          e.preventDefault()
          void search()
        }}
      >
        <input type="search" aria-label="Search past conversations" placeholder="Search past conversations" value={q} onInput={(e) => setQ(e.currentTarget.value)} />
        <button type="submit">Search</button>
      </form>
      {searched && (
        <LoadedView loaded={hits} what="search results">
          {(list) =>
            list.length === 0 ? <p class="muted">Nothing found.</p> : (
              <ol class="hits">
                {list.map((h, i) => <HitView key={i} hit={h} />)}
              </ol>
            )}
        </LoadedView>
      )}
    </div>
  )
}
