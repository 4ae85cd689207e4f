import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import * as Database from "../../src/storage/Database.js"
import { PairingStore } from "../../src/users/PairingStore.js"
import { usersBegin } from "../../src/users/usersFile.js"
import { initAgentFolder } from "../support/agentFolder.js"
import { runKernIn } from "../support/inProcessCli.js"

const UsersJson = Schema.Array(Schema.Struct({
  id: Schema.String,
  status: Schema.Literal("pending", "approved"),
  role: Schema.Literal("operator", "user"),
  toolScope: Schema.NullOr(Schema.String),
  memory: Schema.Literal("shared", "all"),
  code: Schema.NullOr(Schema.String)
}))

/** A stranger writing in on a channel, as a channel will do it: through the store, on the agent's kern.db. */
const request = (dir: string, user: { interface: string; userId: string; displayName?: string }) =>
  Effect.runPromise(
    Effect.flatMap(PairingStore, (store) => store.request({ ...user, chatId: user.userId })).pipe(
      Effect.provide(PairingStore.Default.pipe(Layer.provide(Database.layer({ filename: NodePath.join(dir, ".kern/kern.db") }))))
    )
  )

const usersOf = async (dir: string) => {
  const result = await runKernIn(["users", dir, "--json"])
  expect(result.status, result.stderr).toBe(0)
  return Schema.decodeUnknownSync(Schema.parseJson(UsersJson))(result.stdout)
}

/** Field 22 of /proc/<pid>/stat, as the lock records it. */
const startOf = (pid: number) => {
  const stat = NodeFs.readFileSync(`/proc/${pid}/stat`, "utf8")
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]!
}

describe("kern pair / kern users", () => {
  it.live("pair approves, users lists, promote and scope change the role and scope, revoke forgets; USERS.md follows", () =>
    Effect.promise(async () => {
      const dir = initAgentFolder(["--model", "m"], { toolScope: "write" })
      const alice = await request(dir, { interface: "telegram", userId: "42", displayName: "Alice" })
      await request(dir, { interface: "slack", userId: "U7", displayName: "Bob" })
      // A running agent holds the folder (this live process stands in for it): these commands still work.
      NodeFs.writeFileSync(NodePath.join(dir, ".kern/agent.lock"), JSON.stringify({
        pid: process.pid,
        processStart: startOf(process.pid),
        startedAt: new Date().toISOString(),
        host: NodeOs.hostname(),
        command: "kern run"
      }))

      expect((await usersOf(dir)).map((u) => [u.id, u.status, u.code])).toEqual([
        ["telegram:42", "pending", alice.code],
        ["slack:U7", "pending", expect.stringMatching(/^KERN-/)]
      ])
      const table = await runKernIn(["users", dir])
      expect(table.stdout).toMatch(/^telegram:42 +Alice +pending +user +KERN-/m)

      const paired = await runKernIn(["pair", alice.code.toLowerCase(), dir])
      expect(paired.status, paired.stderr).toBe(0)
      expect(paired.stdout).toContain("approved telegram:42")
      expect((await usersOf(dir))[0]).toMatchObject({ status: "approved", role: "user", toolScope: "read", code: null })
      const usersMd = () => NodeFs.readFileSync(NodePath.join(dir, "USERS.md"), "utf8")
      expect(usersMd()).toMatch(/^# USERS.md — who agent talks to\n/)
      expect(usersMd()).toContain("| Alice | telegram | telegram:42 | user | read |")
      expect(usersMd()).not.toContain("Bob")

      // Asking for more than the config allows is recorded, and reported as capped.
      const scoped = await runKernIn(["users", "scope", "telegram:42", "full", dir])
      expect(scoped.status, scoped.stderr).toBe(0)
      expect(scoped.stdout).toContain("limited to write by the config's toolScope")
      expect(usersMd()).toContain("| Alice | telegram | telegram:42 | user | write |")

      expect((await runKernIn(["users", "promote", "telegram:42", dir])).status).toBe(0)
      expect((await usersOf(dir))[0]).toMatchObject({ role: "operator", toolScope: "write" })
      expect(usersMd()).toContain("| Alice | telegram | telegram:42 | operator | write |")

      const revoked = await runKernIn(["users", "revoke", "telegram:42", dir])
      expect(revoked.status, revoked.stderr).toBe(0)
      expect((await usersOf(dir)).map((u) => u.id)).toEqual(["slack:U7"])
      expect(usersMd()).not.toContain("telegram:42")
      expect(usersMd().split(usersBegin)).toHaveLength(2)
    }))

  it.live("users scope --memory sets how far a user's file tools reach (shared/ unless all); the scope argument still works", () =>
    Effect.promise(async () => {
      const dir = initAgentFolder(["--model", "m"])
      const alice = await request(dir, { interface: "telegram", userId: "42", displayName: "Alice" })
      expect((await runKernIn(["pair", alice.code, dir])).status).toBe(0)
      expect((await usersOf(dir))[0]).toMatchObject({ toolScope: "read", memory: "shared" })
      expect((await runKernIn(["users", dir])).stdout).toMatch(/^telegram:42 +Alice +approved +user +read +shared/m)

      const widened = await runKernIn(["users", "scope", "telegram:42", "--memory", "all", dir])
      expect(widened.status, widened.stderr).toBe(0)
      expect(widened.stdout).toContain("telegram:42's file tools reach the whole agent folder (never .kern/)")
      expect((await usersOf(dir))[0]).toMatchObject({ toolScope: "read", memory: "all" })

      const both = await runKernIn(["users", "scope", "telegram:42", "write", "--memory", "shared", dir])
      expect(both.status, both.stderr).toBe(0)
      expect(both.stdout).toContain("telegram:42 has tool scope write")
      expect(both.stdout).toContain("reach only the agent folder's shared/")
      expect((await usersOf(dir))[0]).toMatchObject({ toolScope: "write", memory: "shared" })

      const neither = await runKernIn(["users", "scope", "telegram:42", dir])
      expect(neither.status).toBe(2)
      expect(neither.stderr).toContain("--memory shared|all")
      const wrong = await runKernIn(["users", "scope", "telegram:42", "--memory", "everything", dir])
      expect(wrong.status).toBe(2)
      expect(wrong.stderr).not.toMatch(/\n\s+at /)
      const help = await runKernIn(["users", "scope", "--help"])
      expect(help.stdout).toContain("--memory shared | all")
      expect(help.stdout).toContain("the agent folder's shared/ only")
    }))

  it("help: kern users runs alone and has subcommands; kern pair takes a code", async () => {
    const users = await runKernIn(["users", "--help"])
    expect(users.status).toBe(0)
    expect(users.stdout).toContain("  kern users [dir] [options]\n  kern users <command> [options]")
    for (const sub of ["promote", "scope", "revoke"]) expect(users.stdout).toMatch(new RegExp(`^  users ${sub} `, "m"))
    expect((await runKernIn(["pair", "--help"])).stdout).toMatch(/kern pair .*<code>/)
  })

  it("mistakes are one line naming what was wrong, with exit 1 (or 2 for the command line)", async () => {
    const dir = initAgentFolder(["--model", "m"])
    const cases: ReadonlyArray<[ReadonlyArray<string>, number, string]> = [
      [["pair", "hello", dir], 2, "\"hello\" is not a pairing code"],
      [["pair", "KERN-ZZZZ", dir], 1, "no pairing is waiting for code KERN-ZZZZ"],
      [["users", "promote", "42", dir], 2, "is not a user id"],
      [["users", "revoke", "telegram:42", dir], 1, "no user telegram:42"],
      [["users", "scope", "telegram:42", "root", dir], 2, "read, write, full"]
    ]
    for (const [args, status, message] of cases) {
      const result = await runKernIn(args)
      expect(result.status, args.join(" ")).toBe(status)
      expect(result.stderr).toContain(message)
      expect(result.stderr).not.toMatch(/\n\s+at /)
    }
    expect((await runKernIn(["users", NodePath.join(dir, "nowhere")])).status).toBe(2)
  })
})
