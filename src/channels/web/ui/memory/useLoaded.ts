import { useCallback, useEffect, useState } from "preact/hooks"
import { getJson, type Loaded, mapLoaded } from "../http.js"
import type { Json } from "../wire.js"

/** Loads `path` when it changes (undefined while loading); `reload` asks again. */
export const useLoaded = <A>(path: string, decode: (u: Json | undefined) => A | undefined) => {
  const [loaded, setLoaded] = useState<Loaded<A> | undefined>(undefined)
  const [round, setRound] = useState(0)
  useEffect(() => {
    let current = true
    setLoaded(undefined)
    void getJson(path).then((answer) => {
      if (current) setLoaded(mapLoaded(answer, decode))
    })
    return () => {
      current = false
    }
    // `decode` is a module-level function in every caller.
  }, [path, round])
  const reload = useCallback(() => setRound((n) => n + 1), [])
  return { loaded, reload, set: setLoaded }
}
