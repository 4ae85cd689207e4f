import { useEffect, useRef, useState } from "preact/hooks"
import { AgentPicker } from "./AgentPicker.js"
import { ApprovalDialog } from "./ApprovalDialog.js"
import { QuestionDialog } from "./QuestionDialog.js"
import { ChatLog, Composer } from "./Chat.js"
import { MemoryOverlay } from "./memory/Overlay.js"
import { SchedulesOverlay } from "./schedules/SchedulesOverlay.js"
import type { Connection, Store } from "./store.js"
import { TurnControls } from "./TurnControls.js"
import type { McpServerView } from "./wire.js"

const connectionText: Record<Connection, string> = {
  connecting: "connecting…",
  connected: "connected",
  reconnecting: "connection lost, reconnecting…",
  back: "back online",
  offline: "offline, retrying…",
  "logged-out": "logged out"
}

/** The chat channels (Telegram, Slack) and where each is; nothing when none is configured. */
const Channels = ({ store }: { readonly store: Store }) => {
  const channels = store.channels.value
  if (channels.length === 0) return null
  return (
    <ul class="channels" aria-label="Chat channels">
      {channels.map((c) => {
        const text = `${c.interface}: ${c.state}${c.detail === "" || c.state === "connected" ? "" : ` (${c.detail})`}`
        return <li key={c.interface} class={`channel channel-${c.state}`} title={c.since === "" ? text : `${text}, since ${c.since}`}>{text}</li>
      })}
    </ul>
  )
}

const mcpClass: Record<McpServerView["state"], string> = {
  connected: "channel-connected",
  starting: "channel-connecting",
  failed: "channel-stopped",
  disabled: "",
  idle: ""
}

/** The MCP servers and where each is: connected (tools), starting, failed (why), disabled; nothing when none. */
const McpServers = ({ store }: { readonly store: Store }) => {
  const servers = store.mcpServers.value
  if (servers.length === 0) return null
  return (
    <ul class="channels" aria-label="MCP servers">
      {servers.map((s) => {
        const text = `mcp ${s.name}: ${s.state === "connected" ? `${s.tools} tools` : s.state}`
        const title = s.reason === undefined ? text : `${text}: ${s.reason}`
        return <li key={s.name} class={`channel ${mcpClass[s.state]}`} title={title}>{text}</li>
      })}
    </ul>
  )
}

/** The summaries, when they are not well: failing (and since when it waits), or the fallback cut in effect. */
const Summaries = ({ store }: { readonly store: Store }) => {
  const s = store.summarizer.value
  if (s === undefined || (s.state !== "failing" && !s.fallbackCut)) return null
  const text = s.state === "failing"
    ? `summaries failing (${s.consecutiveFailures}×)`
    : "summaries catching up"
  const details = [
    s.lastError === undefined ? undefined : `last error: ${s.lastError}`,
    s.lastSuccessAt === undefined ? "no summary yet" : `last summary: ${s.lastSuccessAt}`,
    s.nextAttemptAt === undefined ? undefined : `next attempt after ${s.nextAttemptAt}`,
    `${s.lagMessages} messages not summarized yet`,
    s.fallbackCut ? "older messages are cut at user messages to fit the context window (recall keeps them)" : undefined
  ].filter((line) => line !== undefined).join("\n")
  return (
    <span class={`summaries summaries-${s.state}`} role="status" title={details} aria-label={`${text}. ${details}`}>
      {text}{s.fallbackCut ? ", fallback cut" : ""}
    </span>
  )
}

/** Today's model spend against the agent's daily cap; the caps reached, when any is. */
const Spend = ({ store }: { readonly store: Store }) => {
  const s = store.spend.value
  if (s === undefined) return null
  const cents = s.capCents === undefined ? `${s.usdCents.toFixed(2)}¢` : `${s.usdCents.toFixed(2)}¢ of ${s.capCents}¢`
  const tokens = s.capTokens === undefined ? `${s.tokens} tokens` : `${s.tokens} of ${s.capTokens} tokens`
  const text = `today ${cents}, ${tokens}`
  const details = [`spend on ${s.day}: ${text}`, ...s.reached].join("\n")
  return (
    <span class={`spend${s.reached.length > 0 ? " spend-reached" : ""}`} role="status" title={details} aria-label={details}>
      {s.reached.length > 0 ? `${text} (cap reached)` : text}
    </span>
  )
}

export const App = ({ store }: { readonly store: Store }) => {
  const [memory, setMemory] = useState(false)
  const memoryButton = useRef<HTMLButtonElement>(null)
  const [schedules, setSchedules] = useState(false)
  const schedulesButton = useRef<HTMLButtonElement>(null)

  useEffect(() => {
    const close = store.connect()
    void store.loadHistory()
    void store.loadStatus()
    void store.loadPending()
    void store.loadUsers()
    return close
  }, [store])

  const closeMemory = () => {
    setMemory(false)
    memoryButton.current?.focus()
  }

  const closeSchedules = () => {
    setSchedules(false)
    schedulesButton.current?.focus()
  }

  const state = store.connection.value
  return (
    <div class="app">
      <header class="top">
        <h1>{store.agentName.value ?? "kern"}</h1>
        <span class={`conn conn-${state}`} role="status" aria-live="polite" aria-label={`Connection: ${connectionText[state]}`}>
          {connectionText[state]}
        </span>
        <Channels store={store} />
        <McpServers store={store} />
        <Summaries store={store} />
        <Spend store={store} />
        <TurnControls store={store} />
        <button type="button" ref={schedulesButton} onClick={() => setSchedules(true)} aria-haspopup="dialog">Schedules</button>
        <button type="button" ref={memoryButton} onClick={() => setMemory(true)} aria-haspopup="dialog">Memory</button>
        <AgentPicker />
      </header>
      {store.problem.value !== undefined && <p class="problem" role="alert">{store.problem.value}</p>}
      <main class="chat">
        <ChatLog store={store} />
        <Composer store={store} />
      </main>
      {memory && <MemoryOverlay onClose={closeMemory} />}
      {schedules && <SchedulesOverlay onClose={closeSchedules} />}
      <ApprovalDialog store={store} />
      <QuestionDialog store={store} />
    </div>
  )
}
