import type { ComponentChildren } from "preact"
import type { Loaded } from "../http.js"

const featureNames: Record<string, string> = { recall: "Recall is", context: "Segments and summaries are" }

/** Loading, not built (501) and failure states, said plainly; `children` renders the value. */
export const LoadedView = <A,>(
  { loaded, what, children }: {
    readonly loaded: Loaded<A> | undefined
    readonly what: string
    readonly children: (value: A) => ComponentChildren
  }
) => {
  if (loaded === undefined) return <p class="muted" role="status">Loading {what}…</p>
  switch (loaded._tag) {
    case "NotBuilt":
      return (
        <p class="not-built" role="status">
          {featureNames[loaded.feature] ?? `${loaded.feature} is`} not built in this version of kern yet, so there is no {what}
          {" "}to show.
        </p>
      )
    case "Failed":
      return <p class="failed" role="alert">Could not load {what}: {loaded.message}</p>
    case "Ok":
      return <>{children(loaded.value)}</>
  }
}
