import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { Schema } from "effect"
import { AssistantMessage, Envelope, SessionHeader, SessionLine, ToolResultMessage, UserMessage } from "../../src/session/messages.js"

const encodeLine = Schema.encodeSync(Schema.parseJson(SessionLine))
const lineOf = (line: SessionLine) => `${encodeLine(line)}\n`

const at = "2026-11-22T10:00:00.000Z"
const envelope = new Envelope({ interface: "cli", channel: "terminal", userId: "operator", time: "2026-11-22T11:00:00.000+01:00" })

/**
 * The i-th message of a realistic conversation, in a cycle of four (about 330 bytes a message, as measured on real
 * sessions): a question, a tool call, its result, the answer.
 */
const messageAt = (i: number): SessionLine => {
  const n = Math.floor(i / 4)
  switch (i % 4) {
    case 0:
      return new UserMessage({ text: `question ${n}: what changed in the router config since yesterday, and does DNS still resolve the pi?`, envelope, at })
    case 1:
      return new AssistantMessage({
        text: "Let me look at the config.",
        toolCalls: [{ id: `call_${n}`, name: "read", params: { path: "notes/router.md", limit: 200 } }],
        usage: { inputTokens: 1200 + n, outputTokens: 40, cachedInputTokens: 1000, cacheWriteTokens: 0, costUsdCents: 0.02 },
        at
      })
    case 2:
      return new ToolResultMessage({
        toolCallId: `call_${Math.floor(i / 4)}`,
        toolName: "read",
        isError: false,
        result: [
          "# router",
          `DHCP range .100-.200 (moved ${n} days ago); static leases for the printer, the NAS and the pi`,
          "DNS: 192.168.1.2 (pi-hole), fallback 9.9.9.9; upstream over DoT; blocklists refreshed weekly",
          "lease 24h; IPv6 prefix delegation on; guest VLAN 30 isolated from the LAN; UPnP off",
          "firmware 7.57, auto-update at 03:00; remote admin off; WPA3 on both bands",
          "config exported nightly to notes/router-backup.md; last export ok; port forwards: none, by choice"
        ].join("\n"),
        at
      })
    default:
      return new AssistantMessage({
        text: `answer ${n}: the DHCP range moved to .100-.200 and DNS now points at the pi; nothing else changed.`,
        at
      })
  }
}

/**
 * Sessions brought in before any kern.db: an empty kern.db says a fresh database is meant (kern refuses a missing one
 * beside sessions).
 */
export const meanFreshDatabase = (agentDir: string): void => {
  const dbFile = NodePath.join(agentDir, ".kern", "kern.db")
  if (!NodeFs.existsSync(dbFile)) NodeFs.writeFileSync(dbFile, "")
}

/** Writes `.kern/sessions/<id>.jsonl` of `messages` messages in kern's own format; returns the file's path. */
export const writeSessionFixture = (agentDir: string, messages: number, id = "20261122-100000-000-beef"): string => {
  const dir = NodePath.join(agentDir, ".kern", "sessions")
  NodeFs.mkdirSync(dir, { recursive: true })
  const path = NodePath.join(dir, `${id}.jsonl`)
  meanFreshDatabase(agentDir)
  NodeFs.writeFileSync(path, lineOf(new SessionHeader({ version: 1, id, createdAt: at, agent: "bench" })))
  const batch: Array<string> = []
  for (let i = 0; i < messages; i++) {
    batch.push(lineOf(messageAt(i)))
    if (batch.length === 5000 || i === messages - 1) {
      NodeFs.appendFileSync(path, batch.join(""))
      batch.length = 0
    }
  }
  return path
}
