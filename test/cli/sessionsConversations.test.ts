import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { sessionIdIn } from "../../src/session/conversationIds.js"
import { initAgentFolder } from "../support/agentFolder.js"
import { runKern } from "../support/cli.js"
import { runKernIn } from "../support/inProcessCli.js"
import { pairTelegramUsers } from "../support/pairedUsers.js"
import { writeSessionFixture } from "../support/sessionFixture.js"
import { hostileReply, rawControl } from "./hostileText.js"

// `kern sessions list` is the operator's view of every conversation: each session with the person and the channel of
// its conversation, read from the session's id and the paired users' names in kern.db.

const main = sessionIdIn("20261126-100000-000-aaaa", "main")
const alice = sessionIdIn("20261126-090000-000-bbbb", "telegram-555")
const group = sessionIdIn("20261126-080000-000-cccc", "telegram--1001234")
const thread = sessionIdIn("20261126-070000-000-dddd", "slack-C0123-1700000000-000100")
const mallory = sessionIdIn("20261126-060000-000-eeee", "telegram-777")

/** An agent folder with the operator's session, Alice's, a group's, a Slack thread's and Mallory's (a hostile name). */
const folder = async () => {
  const dir = initAgentFolder()
  for (const [id, messages] of [[mallory, 2], [thread, 3], [group, 5], [alice, 4], [main, 8]] as const) {
    writeSessionFixture(dir, messages, id)
  }
  await pairTelegramUsers(dir, [{ userId: "555", displayName: "Alice" }, { userId: "777", displayName: `Mallory ${hostileReply}` }])
  return dir
}

const listed = async (args: ReadonlyArray<string>) => {
  const result = await runKernIn(["sessions", "list", ...args])
  expect(result.status, result.stderr).toBe(0)
  return result.stdout
}

describe("kern sessions list: every conversation with its person and channel", () => {
  it.live("lists the operator's, a paired user's, a group's and a thread's sessions, each with whom and where", () =>
    Effect.promise(async () => {
      const dir = await folder()
      const json = JSON.parse(await listed([dir, "--json"])) as ReadonlyArray<Record<string, unknown>>
      expect(json.map(({ id, conversation, person, channel, messages }) => ({ id, conversation, person, channel, messages }))).toEqual([
        { id: mallory, conversation: "telegram-777", person: { userId: "telegram:777", name: `Mallory ${hostileReply}` }, channel: "telegram DM", messages: 2 },
        { id: thread, conversation: "slack-C0123-1700000000-000100", person: null, channel: "slack thread C0123", messages: 3 },
        { id: group, conversation: "telegram--1001234", person: null, channel: "telegram group -1001234", messages: 5 },
        { id: alice, conversation: "telegram-555", person: { userId: "telegram:555", name: "Alice" }, channel: "telegram DM", messages: 4 },
        { id: main, conversation: "main", person: { userId: "operator", name: "operator" }, channel: "main", messages: 8 }
      ])

      const table = await listed([dir])
      expect(table).toMatch(/^session +person +channel +messages +size +updated +state$/m)
      expect(table).toMatch(new RegExp(`^${main} +operator +main +8 `, "m"))
      expect(table).toMatch(new RegExp(`^${alice} +Alice \\(telegram:555\\) +telegram DM +4 `, "m"))
      expect(table).toMatch(new RegExp(`^${group} +— +telegram group -1001234 +5 `, "m"))
      expect(table).toMatch(new RegExp(`^${thread} +— +slack thread C0123 +3 `, "m"))
      // A name is the user's own words: shown, never obeyed by the terminal, and on its session's one line.
      expect(table).not.toMatch(rawControl)
      expect(table).toContain("Mallory Done.^[]52;c;ZXZpbA==^G")
      expect(table.split("\n").filter((line) => line.startsWith(mallory))).toHaveLength(1)
      expect(table.trimEnd().split("\n")).toHaveLength(2 + 5)

      // One conversation's sessions only.
      expect((JSON.parse(await listed([dir, "--json", "--conversation", "telegram-555"])) as ReadonlyArray<{ id: string }>).map((s) => s.id))
        .toEqual([alice])
      expect(await listed([dir, "--conversation", "slack-D9"])).toContain("no sessions in conversation slack-D9")

      // The quick bundle bin/kern.js runs for `sessions list` answers the same.
      const quick = await runKern(["sessions", "list", dir])
      expect(quick.stderr).toBe("")
      expect(quick.stdout).toBe(table)
      const quickOne = await runKern(["sessions", "list", dir, "--json", "--conversation", "main"])
      expect((JSON.parse(quickOne.stdout) as ReadonlyArray<{ id: string }>).map((s) => s.id)).toEqual([main])
    })
  )

  it.live("names a paired user's DM without kern.db's names when there is no kern.db, and creates none", () =>
    Effect.promise(async () => {
      const dir = initAgentFolder()
      writeSessionFixture(dir, 2, main)
      writeSessionFixture(dir, 2, alice)
      const dbFile = NodePath.join(dir, ".kern/kern.db")
      NodeFs.rmSync(dbFile, { force: true })
      const json = JSON.parse(await listed([dir, "--json"])) as ReadonlyArray<Record<string, unknown>>
      expect(json.map(({ id, person, channel }) => ({ id, person, channel }))).toEqual([
        { id: alice, person: { userId: "telegram:555", name: null }, channel: "telegram DM" },
        { id: main, person: { userId: "operator", name: "operator" }, channel: "main" }
      ])
      expect(await listed([dir])).toMatch(new RegExp(`^${alice} +telegram:555 +telegram DM `, "m"))
      expect(NodeFs.existsSync(dbFile)).toBe(false)
    })
  )
})
