import { useState } from "preact/hooks"
import { getJson, type Loaded, mapLoaded, query } from "../http.js"
import { LoadedView } from "./LoadedView.js"
import { passage } from "./passage.js"
import { decodeHits, decodeStats, type Hit, type MessageRange } from "./responses.js"
import { useLoaded } from "./useLoaded.js"

const when = (at: string | undefined): string => {
  const date = at === undefined ? undefined : new Date(at)
  return date === undefined || Number.isNaN(date.getTime()) ? "" : date.toLocaleString([], { dateStyle: "medium", timeStyle: "short" })
}

/** A hit as a search result: when, where (the conversation and its messages, or the file), the passage with the match. */
const HitView = ({ hit, query, onOpen }: { readonly hit: Hit; readonly query: string; readonly onOpen: (range: MessageRange) => void }) => {
  const range = hit.range
  return (
    <li class="hit">
      <div class="hit-head">
        <time dateTime={hit.startedAt}>{when(hit.startedAt)}</time>
        <span class="hit-where">
          {hit.source === "file" ? hit.where : `Conversation ${hit.where}`}
        </span>
        {range !== undefined && (
          <span>{range.start === range.end ? `message ${range.start}` : `messages ${range.start}–${range.end}`}</span>
        )}
      </div>
      <p class="hit-passage">
        {passage(hit.text, query).map((piece, i) => piece.match ? <mark key={i}>{piece.text}</mark> : piece.text)}
      </p>
      {range !== undefined && (
        <button type="button" class="link hit-open" onClick={() => onOpen(range)}>
          Open in Sessions
        </button>
      )}
    </li>
  )
}

const label = (key: string) => key.replace(/([A-Z])/g, " $1").toLowerCase()

export const RecallTab = ({ onOpen }: { readonly onOpen: (range: MessageRange) => void }) => {
  const { loaded: stats } = useLoaded("/recall/stats", decodeStats)
  const [q, setQ] = useState("")
  const [hits, setHits] = useState<Loaded<ReadonlyArray<Hit>> | undefined>(undefined)
  const [searched, setSearched] = useState<string | undefined>(undefined)

  const search = async () => {
    if (q.trim().length === 0) return
    setSearched(q.trim())
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
      {searched !== undefined && (
        <LoadedView loaded={hits} what="search results">
          {(list) =>
            list.length === 0 ? <p class="muted">Nothing found.</p> : (
              <ol class="hits">
                {list.map((h, i) => <HitView key={i} hit={h} query={searched ?? ""} onOpen={onOpen} />)}
              </ol>
            )}
        </LoadedView>
      )}
    </div>
  )
}
