import { clip } from "../config/clip.js"
import type { Audience } from "../kernel/Audience.js"
import type { RunToolScope } from "../kernel/toolScope.js"

/**
 * The memory files a conversation that is not the operator's has in its prompt: who the agent is and how it works.
 * KNOWLEDGE.md, USERS.md, the daily notes and the notes summary are what it knows of the operator; they stay out.
 */
export const sharedMemoryFiles = ["AGENTS.md", "IDENTITY.md", "KERN.md"] as const

/** Longest paired name the statement quotes. */
const nameMax = 60

/** Who is speaking, as the statement names them: the paired name (the sender's own text, so quoted on one line) and id. */
const speaker = (audience: Audience): string => {
  const name = audience.name?.replace(/\s+/g, " ").trim() ?? ""
  return name === "" ? `user ${audience.userId}` : `${JSON.stringify(clip(name, nameMax))} (user ${audience.userId})`
}

const scopeWords = (scope: RunToolScope): string => scope === "none" ? "no tools" : `tool scope ${scope}`

const reachWords = (audience: Audience): string =>
  audience.memory === "all" ? "The files you can reach are the agent folder's." : "The files you can reach are in shared/."

/**
 * The preamble of a conversation that is not the operator's: who the agent is, who it is speaking with and with what
 * tool scope, and that the operator's conversation, notes and knowledge are not here. Made of the audience and scope
 * only, so it is the same at every turn of the conversation (the provider's prompt cache keeps it).
 */
export const audiencePreamble = (agentName: string, audience: Audience, scope: RunToolScope): string =>
  `You are ${agentName}, a long-lived agent run by kern. Reply NO_REPLY when nothing needs saying.\n\n` +
  `You are speaking with ${speaker(audience)} on ${audience.interface} (${scopeWords(scope)}), not with the operator. ` +
  "This conversation is theirs: you do not have the operator's conversation, notes or knowledge here, and what is " +
  `said here stays in it. ${reachWords(audience)}`
