import { Effect } from "effect"

// Filled by the kernel: event log, contract baselines, durable memory.
export default Effect.void
