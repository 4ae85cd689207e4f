import { Effect } from "effect"
import * as NodePath from "node:path"
import { AgentConfig } from "../config/AgentConfig.js"
import type { ToolScope } from "../config/schema.js"
import { orIfAbsent, readAgentText } from "../storage/agentFiles.js"
import { atomicWrite } from "../storage/atomicWrite.js"
import { effectiveScope, type Pairing, PairingStore, userKey } from "./PairingStore.js"

export const usersBegin = "<!-- kern:users:begin — generated from kern.db by kern; edits between these lines are replaced -->"
export const usersEnd = "<!-- kern:users:end -->"

const cell = (text: string) => text.replace(/[|\r\n]+/g, " ").trim() || "—"

/** The generated part of USERS.md: the operator's own ways in, then every approved channel user. */
export const renderUsersSection = (pairings: ReadonlyArray<Pairing>, configScope: ToolScope): string => {
  const approved = pairings.filter((p) => p.status === "approved")
  const rows = approved.map((p) =>
    `| ${cell(p.displayName)} | ${cell(p.interface)} | ${cell(userKey(p))} | ${p.role} | ${effectiveScope(p, configScope)} |`
  )
  return [
    usersBegin,
    "## Paired users",
    "",
    `The operator (terminal, web, CLI) has tool scope ${configScope}. Channel users approved with \`kern pair\`:`,
    "",
    ...(rows.length === 0
      ? ["(none yet)"]
      : ["| name | channel | id | role | tool scope |", "| --- | --- | --- | --- | --- |", ...rows]),
    usersEnd
  ].join("\n")
}

/** USERS.md with its generated section replaced (or appended): what the operator wrote around it stays. */
export const mergeUsersFile = (existing: string, section: string): string => {
  const begin = existing.indexOf(usersBegin)
  const end = existing.indexOf(usersEnd, begin)
  if (begin >= 0 && end >= 0) return existing.slice(0, begin) + section + existing.slice(end + usersEnd.length)
  const base = existing.trimEnd()
  return `${base}${base === "" ? "" : "\n\n"}${section}\n`
}

/** Rewrites USERS.md's generated section from kern.db (atomically; untouched when nothing changed). */
export const syncUsersFile = Effect.gen(function*() {
  const { config, paths } = yield* AgentConfig
  const store = yield* PairingStore
  const file = NodePath.join(paths.dir, "USERS.md")
  // Through the door: a USERS.md linked to .kern/.env (or a FIFO) is refused, never copied into a regular USERS.md.
  const existing = yield* readAgentText("USERS.md", { roots: [paths.dir] }).pipe(orIfAbsent(() => ""))
  const next = mergeUsersFile(existing, renderUsersSection(yield* store.list, config.toolScope))
  if (next !== existing) yield* atomicWrite(file, new TextEncoder().encode(next))
}).pipe(Effect.withSpan("kern.users.sync"))
