import { useEffect, useRef, useState } from "preact/hooks"
import { ApprovalDialog } from "./ApprovalDialog.js"
import { ChatLog, Composer } from "./Chat.js"
import { MemoryOverlay } from "./memory/Overlay.js"
import type { Connection, Store } from "./store.js"

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

export const App = ({ store }: { readonly store: Store }) => {
  const [memory, setMemory] = useState(false)
  const memoryButton = useRef<HTMLButtonElement>(null)

  useEffect(() => {
    const close = store.connect()
    void store.loadHistory()
    void store.loadStatus()
    void store.loadPending()
    return close
  }, [store])

  const closeMemory = () => {
    setMemory(false)
    memoryButton.current?.focus()
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
        <button type="button" ref={memoryButton} onClick={() => setMemory(true)} aria-haspopup="dialog">Memory</button>
      </header>
      {store.problem.value !== undefined && <p class="problem" role="alert">{store.problem.value}</p>}
      <main class="chat">
        <ChatLog store={store} />
        <Composer store={store} />
      </main>
      {memory && <MemoryOverlay onClose={closeMemory} />}
      <ApprovalDialog store={store} />
    </div>
  )
}
