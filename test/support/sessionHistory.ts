import { Effect } from "effect"
import { ContextWindow } from "../../src/context/ContextWindow.js"
import type { SessionMessage } from "../../src/session/messages.js"

/** The window's history of `messages` as if loaded from a session file `s1` (its first held message at `firstIndex`). */
export const historyOf = (messages: ReadonlyArray<SessionMessage>, firstIndex = 0) =>
  Effect.flatMap(ContextWindow, (context) =>
    context.historyOf({
      id: "s1",
      path: "",
      header: undefined as never,
      messages,
      synthesized: [],
      messageLines: messages.length,
      validBytes: 0,
      tornBytes: 0,
      missingNewline: false,
      problems: [],
      firstIndex,
      positions: new Map()
    }))
