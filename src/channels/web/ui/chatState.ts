// The chat as a value: history pages and live events fold into one list of items. Pure (no DOM, no signals), so the
// reconnect and dedupe rules are unit-tested under Node.
import { resolutionText } from "./approvals.js"
import type { FileView } from "./attachments.js"
import { failureTag, type ServerEvent } from "./wire.js"

export interface ToolResult {
  readonly text: string
  readonly isError: boolean
  readonly durationMs?: number | undefined
  /** The file the call sent (the message tool's `file`, as GET /history's result names it). */
  readonly file?: FileView | undefined
}
export type Part =
  | { readonly kind: "text"; readonly text: string }
  | { readonly kind: "tool"; readonly id: string; readonly name: string; readonly params: unknown; readonly result?: ToolResult | undefined }
  | { readonly kind: "recall"; readonly query: string; readonly hits: number; readonly tokens: number }
  | { readonly kind: "error"; readonly message: string; readonly failure?: string | undefined }

export type Item =
  | {
    readonly kind: "user"
    readonly key: string
    /** POST /message's id for it (the incoming event's messageId); the turn that answers may be another's. */
    readonly messageId?: string | undefined
    /** Accepted (202) but no turn has taken it in yet: the agent is busy with another. */
    readonly queued?: boolean | undefined
    readonly text: string
    readonly interface: string
    readonly channel?: string | undefined
    /** Who wrote it on its channel (GET /users names them). */
    readonly userId?: string | undefined
    /** The files that came with it (GET /history's attachments, POST /message's answer). */
    readonly files?: ReadonlyArray<FileView> | undefined
    readonly at: string
  }
  | {
    readonly kind: "assistant"
    readonly key: string
    readonly turnId?: string | undefined
    readonly parts: ReadonlyArray<Part>
    readonly status: "thinking" | "streaming" | "done" | "failed"
    readonly at: string
    /** Where else the reply went (a chat channel's chat), named as the page names senders (userNames.ts). */
    readonly deliveredTo?: { readonly interface: string; readonly channel?: string | undefined } | undefined
    /** The turn ended without saying anything (an empty reply or NO_REPLY). */
    readonly silent?: boolean | undefined
  }
  | {
    readonly kind: "outgoing"
    readonly key: string
    readonly text: string
    readonly interface: string
    readonly channel?: string | undefined
    /** The file it carried (the message tool's `file`). */
    readonly file?: FileView | undefined
    readonly at: string
  }
  | {
    readonly kind: "notice"
    readonly key: string
    readonly text: string
    readonly at: string
    /** The tool an approval notice is about, for the line its resolution writes over it. */
    readonly toolId?: string | undefined
  }

export type Assistant = Extract<Item, { kind: "assistant" }>

export interface ChatState {
  readonly items: ReadonlyArray<Item>
  /**
   * The highest event seq applied: anything at or below it was seen already. The server numbers events from its start
   * time in microseconds, so seqs only grow, across its restarts too.
   */
  readonly lastSeq: number
  /** Events were lost (the server sent a reset): the items must be reloaded from history. */
  readonly stale: boolean
}

export const emptyChat: ChatState = { items: [], lastSeq: 0, stale: false }

/** A compacted tool output starts with the compactor's header; the UI shows it as a note. */
export const compactionNote = (text: string): string | undefined => {
  const match = /^\[output compacted: ([^\]]*)\]/.exec(text)
  return match?.[1]
}

/** Items of the newest history page (store.ts keys them `h<n>:…`; older pages, prepended, `p…`). */
const isNewestHistory = (key: string) => /^h\d+:/.test(key)

const updateAssistant = (
  state: ChatState,
  turnId: string,
  at: string,
  f: (item: Assistant) => Assistant
): ReadonlyArray<Item> => {
  const index = state.items.findIndex((item) => item.kind === "assistant" && item.turnId === turnId)
  if (index === -1) {
    // A page loaded while this turn ran has the steps it had recorded (a turn writes each step to the session): its
    // events go on in that item instead of a second copy. A turn that began after the page loaded has its user
    // message (its `incoming`) last, never a history reply.
    const last = state.items[state.items.length - 1]
    if (last?.kind === "assistant" && last.turnId === undefined && isNewestHistory(last.key)) {
      return [...state.items.slice(0, -1), f({ ...last, turnId, status: "thinking" })]
    }
    const fresh: Assistant = { kind: "assistant", key: `turn:${turnId}`, turnId, parts: [], status: "thinking", at }
    return [...state.items, f(fresh)]
  }
  const items = state.items.slice()
  items[index] = f(items[index] as Assistant)
  return items
}

const appendText = (parts: ReadonlyArray<Part>, delta: string): ReadonlyArray<Part> => {
  const last = parts[parts.length - 1]
  return last?.kind === "text"
    ? [...parts.slice(0, -1), { kind: "text", text: last.text + delta }]
    : [...parts, { kind: "text", text: delta }]
}

const hasText = (parts: ReadonlyArray<Part>) => parts.some((p) => p.kind === "text" && p.text.length > 0)

/**
 * Folds one live event in. An event at or below `lastSeq` was seen already (a reconnect's replay overlapping what
 * arrived) and changes nothing; a reset marks the chat stale.
 */
export const applyEvent = (state: ChatState, event: ServerEvent): ChatState => {
  if (event.seq <= state.lastSeq) return state
  const base: ChatState = { items: state.items, lastSeq: event.seq, stale: state.stale || event.type === "reset" }
  const items = foldEvent(base, event)
  return items === base.items ? base : { ...base, items }
}

const foldEvent = (state: ChatState, event: ServerEvent): ReadonlyArray<Item> => {
  switch (event.type) {
    case "incoming":
      if (state.items.some((item) => item.kind === "user" && item.messageId === event.messageId)) {
        return state.items.map((item) =>
          item.kind === "user" && item.messageId === event.messageId ? { ...item, queued: false } : item
        )
      }
      return [...state.items, {
        kind: "user",
        key: `in:${event.messageId}`,
        messageId: event.messageId,
        text: event.text,
        interface: event.interface,
        channel: event.channel,
        userId: event.userId,
        at: event.at
      }]
    case "thinking":
    // The context's own work (summarizing an overflow) and a provider retry's wait are the turn at work, as a step is.
    case "context":
    case "retry":
      return updateAssistant(state, event.turnId, event.at, (a) => a)
    case "text-delta":
      return updateAssistant(state, event.turnId, event.at, (a) => ({
        ...a,
        status: "streaming",
        parts: appendText(a.parts, event.delta)
      }))
    case "tool-call":
      return updateAssistant(state, event.turnId, event.at, (a) =>
        a.parts.some((p) => p.kind === "tool" && p.id === event.id) ? a : {
          ...a,
          status: "streaming",
          parts: [...a.parts, { kind: "tool", id: event.id, name: event.name, params: event.params }]
        })
    case "tool-result": {
      const result: ToolResult = { text: event.text, isError: event.isError, durationMs: event.durationMs }
      return updateAssistant(state, event.turnId, event.at, (a) => {
        const known = a.parts.some((p) => p.kind === "tool" && p.id === event.id)
        const parts: ReadonlyArray<Part> = known
          ? a.parts.map((p) => p.kind === "tool" && p.id === event.id ? { ...p, result } : p)
          : [...a.parts, { kind: "tool", id: event.id, name: event.name, params: null, result }]
        return { ...a, parts }
      })
    }
    case "recall":
      return updateAssistant(state, event.turnId, event.at, (a) => ({
        ...a,
        parts: [{ kind: "recall", query: event.query, hits: event.hits, tokens: event.tokens }, ...a.parts]
      }))
    case "finish":
      return updateAssistant(state, event.turnId, event.at, (a) => ({
        ...a,
        status: "done",
        silent: !event.delivered && !hasText(a.parts),
        // The stream may have started before this page loaded: the reply fills in what the deltas did not bring.
        parts: hasText(a.parts) || event.reply.length === 0 ? a.parts : [...a.parts, { kind: "text", text: event.reply }]
      }))
    case "error":
      return updateAssistant(state, event.turnId, event.at, (a) => ({
        ...a,
        status: "failed",
        parts: [...a.parts, { kind: "error", message: event.message, failure: failureTag(event.failure) }]
      }))
    case "outgoing": {
      const turnId = event.turnId
      const turn = turnId === undefined
        ? -1
        : state.items.findIndex((item) => item.kind === "assistant" && item.turnId === turnId)
      if (turnId !== undefined && turn !== -1) {
        // The turn's reply is on screen already: say where else it went instead of showing it twice.
        return event.interface === "web" ? state.items : updateAssistant(state, turnId, event.at, (a) => ({
          ...a,
          deliveredTo: { interface: event.interface, channel: event.channel }
        }))
      }
      return [...state.items, {
        kind: "outgoing",
        key: `out:${event.seq}`,
        text: event.text,
        interface: event.interface,
        channel: event.channel,
        ...(event.file === undefined ? {} : { file: event.file }),
        at: event.at
      }]
    }
    case "approval":
      return addNotice(state, askedNotice(event)).items
    case "approval-resolved": {
      const key = `approval:${event.id}`
      const asked = state.items.find((item) => item.key === key)
      const notice: Item = {
        kind: "notice",
        key,
        text: resolutionText(event, asked?.kind === "notice" ? asked.toolId : undefined),
        at: event.at
      }
      return asked === undefined ? [...state.items, notice] : state.items.map((item) => item === asked ? notice : item)
    }
    case "limit":
      return addNotice(state, { key: `limit:${event.cap}.${event.measure}:${event.key}:${event.day}`, text: event.message, at: event.at }).items
    case "heartbeat":
    case "reset":
    case "question":
    case "question-resolved":
      return state.items
  }
}

/**
 * Replaces the items with the newest history page: it holds every finished turn, and the steps a running turn has
 * recorded so far (its events then go on in that item: updateAssistant). The turns still running on screen (and the
 * messages they answer, or that wait) stay below it.
 */
export const replaceWithHistory = (state: ChatState, page: ReadonlyArray<Item>): ChatState => {
  const running = new Set(
    state.items.flatMap((item) =>
      item.kind === "assistant" && item.turnId !== undefined && (item.status === "thinking" || item.status === "streaming")
        ? [item.turnId]
        : []
    )
  )
  const live = state.items.filter((item) =>
    item.kind === "assistant"
      ? item.turnId !== undefined && running.has(item.turnId)
      : item.kind === "user" && item.messageId !== undefined && (item.queued === true || running.has(item.messageId))
  )
  return { ...state, items: [...page, ...live], stale: false }
}

/**
 * A message the server accepted (202 with its id) shows at once, marked queued until its `incoming` event comes; when
 * that event came first, there is nothing to add.
 */
export const addSent = (
  state: ChatState,
  sent: { readonly messageId: string; readonly text: string; readonly at: string; readonly files?: ReadonlyArray<FileView> | undefined }
): ChatState => {
  const files = sent.files === undefined || sent.files.length === 0 ? {} : { files: sent.files }
  // Its incoming event came first: the files go onto the item it made.
  if (state.items.some((item) => item.kind === "user" && item.messageId === sent.messageId)) {
    return "files" in files
      ? { ...state, items: state.items.map((item) => item.kind === "user" && item.messageId === sent.messageId ? { ...item, ...files } : item) }
      : state
  }
  return {
    ...state,
    items: [...state.items, {
      kind: "user",
      key: `in:${sent.messageId}`,
      messageId: sent.messageId,
      text: sent.text,
      interface: "web",
      ...files,
      at: sent.at,
      queued: true
    }]
  }
}

/** The log's line for a call waiting for approval; its resolution is written over it. */
export const askedNotice = (approval: { readonly id: string; readonly toolId: string; readonly at: string }) => ({
  key: `approval:${approval.id}`,
  text: `${approval.toolId} waits for approval`,
  at: approval.at,
  toolId: approval.toolId
})

/** A line of the page's own in the log (what an answer to an approval came to), once per key. */
export const addNotice = (
  state: ChatState,
  notice: { readonly key: string; readonly text: string; readonly at: string; readonly toolId?: string | undefined }
): ChatState =>
  state.items.some((item) => item.key === notice.key) ? state : { ...state, items: [...state.items, { kind: "notice", ...notice }] }
