import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as NodePath from "node:path"
import * as Database from "../../src/storage/Database.js"
import { PairingStore } from "../../src/users/PairingStore.js"
import { initAgentFolder } from "../support/agentFolder.js"
import { runKernIn } from "../support/inProcessCli.js"

/** A stranger writing in on a channel, through the store, on the agent's kern.db. */
const request = (dir: string, user: { interface: string; userId: string; displayName?: string }) =>
  Effect.runPromise(
    Effect.flatMap(PairingStore, (store) => store.request({ ...user, chatId: user.userId })).pipe(
      Effect.provide(PairingStore.Default.pipe(Layer.provide(Database.layer({ filename: NodePath.join(dir, ".kern/kern.db") }))))
    )
  )

describe("kern status: what waits for the operator", () => {
  it.live("pending pairings with their codes (names shown, not obeyed); approved users are not listed", () =>
    Effect.promise(async () => {
      const dir = initAgentFolder(["--model", "m"])
      const alice = await request(dir, { interface: "telegram", userId: "42", displayName: "Alice\u001b[2J" })
      const bob = await request(dir, { interface: "slack", userId: "U7", displayName: "Bob" })
      expect((await runKernIn(["pair", bob.code, dir])).status).toBe(0)
      const shown = await runKernIn(["status", dir])
      // This bare folder lists problems (no API key, a model with no price), so status exits 1; they are not the subject.
      expect(shown.status, shown.stderr).toBe(1)
      expect(shown.stdout).toContain("pairings:  1 waiting (kern pair <code>)")
      expect(shown.stdout).toContain(`  ${alice.code} telegram:42 (Alice^[[2J)`)
      expect(shown.stdout).not.toContain("slack:U7")
      expect(shown.stdout).not.toContain("\u001b[2J")
      const json = JSON.parse((await runKernIn(["status", dir, "--json"])).stdout)
      expect(json.pendingPairings).toEqual([{ id: "telegram:42", name: "Alice\u001b[2J", code: alice.code }])
      expect(json.pendingApprovals).toEqual([])
    }))
})
