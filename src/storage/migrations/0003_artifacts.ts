import { Effect } from "effect"

// Filled by the tools: the artifact index.
export default Effect.void
