import type { LanguageModel } from "@effect/ai"
import { Context } from "effect"

/** The model heartbeat turns run on: `heartbeatModel` (a cheaper one, typically), else the agent's own. */
export class HeartbeatModel extends Context.Tag("kern/model/HeartbeatModel")<
  HeartbeatModel,
  { readonly modelId: string; readonly model: LanguageModel.Service }
>() {}
