import { useEffect, useRef, useState } from "preact/hooks"
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

export const App = ({ store }: { readonly store: Store }) => {
  const [memory, setMemory] = useState(false)
  const memoryButton = useRef<HTMLButtonElement>(null)

  useEffect(() => {
    const close = store.connect()
    void store.loadHistory()
    void store.loadStatus()
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
        <button type="button" ref={memoryButton} onClick={() => setMemory(true)} aria-haspopup="dialog">Memory</button>
      </header>
      {store.problem.value !== undefined && <p class="problem" role="alert">{store.problem.value}</p>}
      <main class="chat">
        <ChatLog store={store} />
        <Composer store={store} />
      </main>
      {memory && <MemoryOverlay onClose={closeMemory} />}
    </div>
  )
}
