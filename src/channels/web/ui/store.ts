// The page's live state: the chat folded from history pages and the event stream, and the connection's state.
// Made once by main.tsx and handed down; nothing here lives at module level.
import { batch, signal } from "@preact/signals"
import { applyQuestionEvents, loadQuestions, noQuestions, type QuestionsState, resolveQuestion } from "./questions.js"
import { type ApprovalsState, loadApprovals as mergeApprovals, noApprovals, resolveApproval } from "./approvals.js"
import { addNotice, addSent, type ChatState, emptyChat, replaceWithHistory } from "./chatState.js"
import { decodeHistory, type HistoryPage, prependPage } from "./historyItems.js"
import { foldLive } from "./liveFold.js"
import { decodeFiles, decodeMediaLimits, type MediaLimits } from "./attachments.js"
import { at, getJson, mapLoaded, postJson, query } from "./http.js"
import { decodeUsers, noNames, unknownSender, type UserNames, userKeyOf } from "./userNames.js"
import { sseEventName } from "../sseEventName.js"
import {
  type ChannelState,
  decodeApprovals,
  decodeQuestions,
  decodeChannels,
  decodeEvent,
  decodeMcpServers,
  decodeSpend,
  decodeSummarizer,
  eventTypes,
  isObject,
  type McpServerView,
  type ServerEvent,
  type SpendState,
  str,
  type SummarizerState
} from "./wire.js"

export type Connection = "connecting" | "connected" | "reconnecting" | "back" | "offline" | "logged-out"

const historyPageSize = 40
/** How long "back" shows after a reconnect before it settles to "connected". */
const backMillis = 4000
/** How long events gather before they are folded into the chat together. */
const batchMillis = 30
/** Retry delay after the browser gave up on the stream (it retries network errors itself). */
const reopenMillis = 3000
/** How often /status is asked again while chat channels are configured (their states change on their own). */
const statusMillis = 30_000

export const makeStore = () => {
  const chat = signal<ChatState>(emptyChat)
  const connection = signal<Connection>("connecting")
  const before = signal<string | undefined>(undefined)
  const loadingOlder = signal(false)
  const problem = signal<string | undefined>(undefined)
  const agentName = signal<string | undefined>(undefined)
  const approvals = signal<ApprovalsState>(noApprovals)
  const questions = signal<QuestionsState>(noQuestions)
  let questionsGeneration = 0
  const channels = signal<ReadonlyArray<ChannelState>>([])
  const summarizer = signal<SummarizerState | undefined>(undefined)
  const spend = signal<SpendState | undefined>(undefined)
  const mcpServers = signal<ReadonlyArray<McpServerView>>([])
  const userNames = signal<UserNames>(noNames)
  /** The caps on a message's files, as /status says them (undefined until it has). */
  const mediaLimits = signal<MediaLimits | undefined>(undefined)
  /** Senders the names were asked again for once already: someone without a name is not asked about every time. */
  const askedNames = new Set<string>()
  let historyGeneration = 0
  let approvalsGeneration = 0

  const loadHistory = async (): Promise<void> => {
    const generation = ++historyGeneration
    const loaded = mapLoaded(
      await getJson(`/history${query({ limit: historyPageSize })}`),
      (u) => decodeHistory(u, `h${generation}`)
    )
    if (generation !== historyGeneration) return
    if (loaded._tag !== "Ok") {
      problem.value = loaded._tag === "NotBuilt" ? "History is not built in this server yet." : loaded.message
      return
    }
    batch(() => {
      chat.value = replaceWithHistory(chat.value, loaded.value.items)
      before.value = loaded.value.before
      problem.value = undefined
    })
  }

  const loadOlder = async (): Promise<void> => {
    const cursor = before.value
    if (cursor === undefined || loadingOlder.value) return
    loadingOlder.value = true
    const loaded = mapLoaded(
      await getJson(`/history${query({ limit: historyPageSize, before: cursor })}`),
      (u): HistoryPage | undefined => decodeHistory(u, `p${cursor}`)
    )
    batch(() => {
      loadingOlder.value = false
      if (loaded._tag !== "Ok") {
        problem.value = loaded._tag === "NotBuilt" ? "Older history is not built yet." : loaded.message
        return
      }
      chat.value = prependPage(chat.value, loaded.value.items)
      before.value = loaded.value.before
    })
  }

  const loadStatus = async (): Promise<void> => {
    const loaded = await getJson("/status")
    if (loaded._tag !== "Ok" || !isObject(loaded.value)) return
    const status = loaded.value
    batch(() => {
      agentName.value = str(status, "name")
      channels.value = decodeChannels(status)
      summarizer.value = decodeSummarizer(status)
      spend.value = decodeSpend(status)
      mcpServers.value = decodeMcpServers(status)
      mediaLimits.value = decodeMediaLimits(status)
    })
  }

  /** The channel users' names (a server without GET /users has none: messages say their channel and chat). */
  const loadUsers = async (): Promise<void> => {
    const loaded = mapLoaded(await getJson("/users"), decodeUsers)
    if (loaded._tag === "Ok") userNames.value = loaded.value
  }

  /** Asks for the names again when a message comes from someone they lack (paired since), once per sender. */
  const nameSenders = (events: ReadonlyArray<ServerEvent>) => {
    const unknown = events.flatMap((event) =>
      event.type === "incoming" && unknownSender(userNames.value, event) && !askedNames.has(userKeyOf(event.interface, event.userId))
        ? [userKeyOf(event.interface, event.userId)]
        : []
    )
    if (unknown.length === 0) return
    for (const key of unknown) askedNames.add(key)
    void loadUsers()
  }

  /** What waits for a person now (on page load, and whenever the stream opens: events may have been missed). */
  const loadPending = async (): Promise<void> => {
    const generation = ++approvalsGeneration
    const loaded = mapLoaded(await getJson("/approvals"), decodeApprovals)
    // Approvals arrived in a later build than the chat: a server without them has nothing to ask.
    if (generation !== approvalsGeneration || loaded._tag !== "Ok") return
    approvals.value = mergeApprovals(approvals.value, loaded.value)
  }

  /** The questions waiting for an answer here (with loadPending: events may have been missed). */
  const loadPendingQuestions = async (): Promise<void> => {
    const generation = ++questionsGeneration
    const loaded = mapLoaded(await getJson("/questions"), decodeQuestions)
    if (generation !== questionsGeneration || loaded._tag !== "Ok") return
    questions.value = loadQuestions(questions.value, loaded.value)
  }

  /**
   * Answers a question: option numbers (0-based) and/or the person's own words. Undefined when the answer was taken;
   * otherwise what went wrong. A question resolved elsewhere first (404) waits no more either way.
   */
  const answerQuestion = async (id: string, reply: { readonly choices: ReadonlyArray<number>; readonly text?: string }): Promise<string | undefined> => {
    const body = reply.text === undefined ? { choices: [...reply.choices] } : { choices: [...reply.choices], text: reply.text }
    const answered = await postJson(`/questions/${encodeURIComponent(id)}`, body)
    if (answered._tag === "Ok" || (answered._tag === "Failed" && answered.status === 404)) {
      questions.value = resolveQuestion(questions.value, id)
      return answered._tag === "Ok" ? undefined : "That question was already answered (or timed out)."
    }
    return answered._tag === "NotBuilt" ? "Questions are not built in this server yet." : answered.message
  }

  /**
   * Answers an approval. Undefined when the answer was taken; otherwise what went wrong. An approval answered
   * elsewhere first (404) waits no more either way.
   */
  const decide = async (id: string, approved: boolean): Promise<string | undefined> => {
    const answered = await postJson(`/approvals/${encodeURIComponent(id)}`, { approved })
    if (answered._tag === "Ok") {
      approvals.value = resolveApproval(approvals.value, id)
      return undefined
    }
    if (answered._tag === "Failed" && answered.status === 404) {
      const text = "That call was already answered elsewhere (or timed out)."
      // The dialog moves on from it: the log keeps the word of why the answer was not taken.
      batch(() => {
        approvals.value = resolveApproval(approvals.value, id)
        chat.value = addNotice(chat.value, { key: `answer:${id}`, text, at: new Date().toISOString() })
      })
      return text
    }
    return answered._tag === "NotBuilt" ? "Approvals are not built in this server yet." : answered.message
  }

  /** Opens the event stream; returns the function that closes it. */
  const connect = (): (() => void) => {
    let source: EventSource | undefined
    let closed = false
    let backTimer: ReturnType<typeof setTimeout> | undefined
    let reopenTimer: ReturnType<typeof setTimeout> | undefined
    let everOpen = false
    // Chat channels come and go on their own, and a failing summarizer recovers on its own: their states are asked
    // again now and then while there are channels or the summaries are not well.
    const summariesUnwell = () => summarizer.value !== undefined && (summarizer.value.state === "failing" || summarizer.value.fallbackCut)
    // An MCP server that is starting or failed changes on its own too.
    const mcpUnsettled = () => mcpServers.value.some((server) => server.state === "starting" || server.state === "failed")
    const statusTimer = setInterval(() => {
      if (channels.value.length > 0 || summariesUnwell() || mcpUnsettled()) void loadStatus()
    }, statusMillis)

    // Events that arrive together (a replay, a fast stream of deltas) are folded in one go: one render and one
    // markdown pass per batch instead of one per delta.
    let pending: Array<ServerEvent> = []
    let flushTimer: ReturnType<typeof setTimeout> | undefined
    const flush = () => {
      flushTimer = undefined
      const events = pending
      pending = []
      const wasStale = chat.value.stale
      const live = foldLive({ chat: chat.value, approvals: approvals.value }, events)
      batch(() => {
        chat.value = live.chat
        approvals.value = live.approvals
        questions.value = applyQuestionEvents(questions.value, events)
      })
      // Lost events (the server's replay buffer no longer had them, or it restarted) are in the session file.
      if (chat.value.stale && !wasStale) void loadHistory()
      nameSenders(events)
      // A turn may have found the summaries failing (or caught up): the header says so.
      if (events.some((event) => event.type === "finish")) void loadStatus()
    }
    const onMessage = (message: MessageEvent<string>) => {
      const event = decodeEvent(message.data)
      if (event === undefined) return
      pending.push(event)
      flushTimer ??= setTimeout(flush, batchMillis)
    }

    const open = (fresh: boolean) => {
      const es = new EventSource(at("/events?questions=web"))
      source = es
      for (const type of eventTypes) es.addEventListener(sseEventName(type), onMessage)
      es.addEventListener("message", onMessage)
      es.onopen = () => {
        clearTimeout(backTimer)
        if (everOpen) {
          connection.value = "back"
          backTimer = setTimeout(() => {
            if (connection.value === "back") connection.value = "connected"
          }, backMillis)
        } else {
          connection.value = "connected"
        }
        everOpen = true
        // A new EventSource cannot send Last-Event-ID: what happened while it was away comes from the session.
        if (fresh) void loadHistory()
        void loadPending()
        void loadPendingQuestions()
        if (channels.value.length > 0) void loadStatus()
      }
      es.onerror = () => {
        if (closed) return
        if (es.readyState === EventSource.CLOSED) {
          // The browser gives up on an answer that is not a stream: a 401 (the session cookie is gone, as after the
          // agent restarted) will not heal by retrying; anything else may.
          connection.value = "offline"
          void getJson("/status").then((answer) => {
            if (closed) return
            if (answer._tag === "Failed" && answer.status === 401) {
              connection.value = "logged-out"
              problem.value = answer.message
            } else {
              reopenTimer = setTimeout(() => {
                if (!closed) open(true)
              }, reopenMillis)
            }
          })
        } else {
          connection.value = everOpen ? "reconnecting" : "connecting"
        }
      }
    }

    open(false)
    return () => {
      closed = true
      clearTimeout(backTimer)
      clearTimeout(reopenTimer)
      clearTimeout(flushTimer)
      clearInterval(statusTimer)
      source?.close()
    }
  }

  /** Sends a message and its files (each `{ name, data }`, data in base64); the failure's words, or undefined. */
  const send = async (text: string, files: ReadonlyArray<{ readonly name: string; readonly data: string }> = []): Promise<string | undefined> => {
    const sent = await postJson("/message", files.length === 0 ? { text } : { text, files: files.map((f) => ({ name: f.name, data: f.data })) })
    if (sent._tag === "Ok") {
      const answer = isObject(sent.value) ? sent.value : undefined
      const messageId = answer && str(answer, "turnId")
      const stored = answer && Array.isArray(answer["files"]) ? decodeFiles(answer["files"]) : []
      if (messageId !== undefined) chat.value = addSent(chat.value, { messageId, text, files: stored, at: new Date().toISOString() })
      return undefined
    }
    return sent._tag === "NotBuilt" ? "Sending is not built in this server yet." : sent.message
  }

  return {
    chat,
    connection,
    before,
    loadingOlder,
    problem,
    agentName,
    approvals,
    questions,
    answerQuestion,
    channels,
    summarizer,
    spend,
    mcpServers,
    userNames,
    mediaLimits,
    loadUsers,
    loadHistory,
    loadOlder,
    loadStatus,
    loadPending,
    decide,
    connect,
    send
  }
}

export type Store = ReturnType<typeof makeStore>
