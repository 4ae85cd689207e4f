import { useState } from "preact/hooks"
import { getJson, type Loaded, mapLoaded, query } from "../http.js"
import { LoadedView } from "./LoadedView.js"
import { RawMessages } from "./RawMessages.js"
import { decodeHits, decodeStats, type Hit } from "./responses.js"
import { useLoaded } from "./useLoaded.js"

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
