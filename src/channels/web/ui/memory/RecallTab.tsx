import { useState } from "preact/hooks"
import { getJson, type Loaded, mapLoaded, query } from "../http.js"
import { arr, isObject, type Json } from "../wire.js"
import { LoadedView } from "./LoadedView.js"
import { useLoaded } from "./useLoaded.js"

/** The stats route's figures, whatever it names them: a number or a date per key. */
const decodeStats = (u: Json | undefined): ReadonlyArray<readonly [string, string]> | undefined =>
  isObject(u)
    ? Object.entries(u).flatMap(([key, value]) =>
      typeof value === "number" || typeof value === "string" ? [[key, String(value)] as const] : []
    )
    : undefined

interface Hit {
  readonly text: string
  readonly meta: string
}

const decodeHits = (u: Json | undefined): ReadonlyArray<Hit> | undefined => {
  const list = Array.isArray(u) ? u : isObject(u) ? arr(u, "results").length > 0 ? arr(u, "results") : arr(u, "hits") : undefined
  if (list === undefined) return undefined
  return list.filter(isObject).map((h) => ({
    text: typeof h["text"] === "string" ? h["text"] : JSON.stringify(h),
    meta: ["sessionId", "role", "at", "score", "distance"]
      .flatMap((k) => typeof h[k] === "string" || typeof h[k] === "number" ? [`${k} ${String(h[k])}`] : [])
      .join(" · ")
  }))
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
                {list.map((h, i) => (
                  <li key={i}>
                    <div class="muted">{h.meta}</div>
                    <pre class="raw-text">{h.text}</pre>
                  </li>
                ))}
              </ol>
            )}
        </LoadedView>
      )}
    </div>
  )
}
