import { useEffect, useState } from "preact/hooks"
import { decodeHostedAgents, type HostedAgent, hostedName } from "./host/hostAgents.js"
import { openAgent } from "./host/openAgent.js"
import { parseJson } from "./wire.js"

/** The host's agents as the host session sees them; undefined when there is no host, or no host session. */
const loadHosted = async (): Promise<ReadonlyArray<HostedAgent> | undefined> => {
  try {
    const response = await fetch(new URL("../../agents", document.baseURI), { credentials: "same-origin", headers: { accept: "application/json" } })
    if (!response.ok) return undefined
    return decodeHostedAgents(parseJson(await response.text()))
  } catch {
    return undefined
  }
}

/**
 * Under `kern serve`, with a host session: a menu of the other hosted agents, each opened through the host's
 * hand-over (hostAgents.ts's openAgent: the host asks that agent's own login for a session, scoped to its path; no
 * agent's cookie or token ever reaches another). Outside a host (`kern start`), or without a host session, nothing.
 */
export const AgentPicker = () => {
  const here = hostedName(location.pathname)
  const [agents, setAgents] = useState<ReadonlyArray<HostedAgent> | undefined>(undefined)

  useEffect(() => {
    if (here === undefined) return
    let live = true
    void loadHosted().then((list) => live && setAgents(list))
    return () => {
      live = false
    }
  }, [here])

  const [error, setError] = useState<string | undefined>(undefined)
  if (here === undefined || agents === undefined) return null
  const open = (name: string) => {
    setError(undefined)
    void openAgent("agent", name).then(setError)
  }
  const refresh = (event: Event) => {
    if ((event.currentTarget as HTMLDetailsElement).open) void loadHosted().then(setAgents)
  }
  return (
    <details class="picker" onToggle={refresh}>
      <summary aria-label="Switch agent">Agents</summary>
      <div class="picker-menu">
        <ul>
          {agents.map((agent) =>
            agent.name === here
              ? <li key={agent.name} class="picker-here" aria-current="page">{agent.name} <span class="muted">(this one)</span></li>
              : (
                <li key={agent.name} class="picker-agent">
                  <button type="button" class="link" onClick={() => open(agent.name)}>{agent.name}</button>
                  <span class={`picker-state state-${agent.state}`}>{agent.state}</span>
                  {agent.problem !== undefined && <span class="picker-problem">{agent.problem}</span>}
                </li>
              )
          )}
        </ul>
        {error !== undefined && <p class="picker-problem" role="alert">{error}</p>}
        <a href="../../">All agents</a>
      </div>
    </details>
  )
}
