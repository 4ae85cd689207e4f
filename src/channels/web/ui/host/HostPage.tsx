import { useEffect, useRef, useState } from "preact/hooks"
import type { HostedAgent } from "./hostAgents.js"
import { openAgent } from "./openAgent.js"
import type { HostState } from "./hostState.js"

const Login = ({ state, error }: { readonly state: HostState; readonly error?: string | undefined }) => {
  const input = useRef<HTMLInputElement>(null)
  const submit = (event: Event) => {
    event.preventDefault()
    const field = input.current
    if (field === null || field.value.trim() === "") return
    const token = field.value.trim()
    // The token leaves the page with this one request; nothing keeps it (no storage, no URL, not the field).
    field.value = ""
    void state.login(token)
  }
  return (
    <form class="host-login" onSubmit={submit}>
      <h2>Log in to the host</h2>
      <p class="muted">The host token is KERN_HOST_TOKEN in <code>.kern-host/.env</code> beside host.json.</p>
      <label>
        Host token
        <input ref={input} type="password" name="token" autocomplete="off" spellcheck={false} required />
      </label>
      <button type="submit">Log in</button>
      {error !== undefined && <p class="problem" role="alert">{error}</p>}
    </form>
  )
}

const AgentRow = ({ agent }: { readonly agent: HostedAgent }) => {
  const [opening, setOpening] = useState(false)
  const [error, setError] = useState<string | undefined>(undefined)
  const open = () => {
    setOpening(true)
    setError(undefined)
    void openAgent("host", agent.name).then((failed) => {
      setOpening(false)
      setError(failed)
    })
  }
  return (
    <li class="host-agent" data-agent={agent.name}>
      <button type="button" onClick={open} disabled={opening} aria-label={`Open ${agent.name}`}>{agent.name}</button>
      <span class={`host-state state-${agent.state}`} aria-label={`${agent.name} is ${agent.state}`}>{agent.state}</span>
      {agent.problem !== undefined && <span class="host-problem problem">{agent.problem}</span>}
      {error !== undefined && <span class="host-problem problem" role="alert">{error}</span>}
    </li>
  )
}

/** "3 agents: 1 live, 2 passive". */
const counts = (agents: ReadonlyArray<HostedAgent>): string => {
  const parts = (["live", "waking", "passivating", "passive"] as const)
    .map((state) => [state, agents.filter((a) => a.state === state).length] as const)
    .filter(([, n]) => n > 0)
    .map(([state, n]) => `${n} ${state}`)
  return `${agents.length} ${agents.length === 1 ? "agent" : "agents"}: ${parts.join(", ")}`
}

export const HostPage = ({ state }: { readonly state: HostState }) => {
  useEffect(() => {
    void state.load()
    return state.stop
  }, [state])
  const view = state.view.value
  return (
    <div class="app host">
      <header class="top">
        <h1>kern serve</h1>
        {view._tag === "Agents" && (
          <span class={`conn conn-${view.stream === "live" ? "connected" : "reconnecting"}`} role="status">
            {view.stream === "live" ? "live" : "reconnecting…"}
          </span>
        )}
        {view._tag === "Agents" && <button type="button" onClick={() => void state.logout()}>Log out</button>}
      </header>
      <main class="host-main">
        {view._tag === "Checking" && <p class="muted">loading…</p>}
        {view._tag === "Login" && <Login state={state} error={view.error} />}
        {view._tag === "Failed" && <p class="problem" role="alert">{view.error}</p>}
        {view._tag === "Agents" && view.agents.length > 0 && <p class="muted host-counts">{counts(view.agents)}</p>}
        {view._tag === "Agents" && (
          view.agents.length === 0
            ? <p class="muted">No agents are hosted (host.json names them).</p>
            : (
              <ul class="host-agents" aria-label="Hosted agents">
                {view.agents.map((agent) => <AgentRow key={agent.name} agent={agent} />)}
              </ul>
            )
        )}
      </main>
    </div>
  )
}
