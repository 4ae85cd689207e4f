import type { AgentInfo } from "./AgentHandle.js"

/**
 * The hosted agents as `GET /agents` and the host page's event stream give them: name, state, problem if any, and
 * why an agent is never passivated (`keptLive`).
 */
export const agentsBody = (agents: ReadonlyArray<AgentInfo>) => ({
  agents: agents.map((a) => ({
    name: a.name,
    state: a.state,
    ...(a.problem === undefined ? {} : { problem: a.problem }),
    ...(a.keptLive === undefined ? {} : { keptLive: a.keptLive })
  }))
})
