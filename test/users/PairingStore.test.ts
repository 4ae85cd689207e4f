import { SqlClient } from "@effect/sql"
import { NodeContext } from "@effect/platform-node"
import { assert, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, TestClock } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import * as AgentConfig from "../../src/config/AgentConfig.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import * as Database from "../../src/storage/Database.js"
import { databases, type TestDatabase } from "../support/databases.js"
import { migrations } from "../../src/storage/migrations.js"
import { codeAlphabet, codeLifetimeMs, codePattern, PairingStore } from "../../src/users/PairingStore.js"
import { mergeUsersFile, syncUsersFile, usersBegin, usersEnd } from "../../src/users/usersFile.js"

const storeOn = (database: TestDatabase["layer"]) => PairingStore.Default.pipe(Layer.provideMerge(database))
const store = storeOn(Database.layerMemory)

const alice = { interface: "telegram", userId: "42", chatId: "42", displayName: "Alice" }
const bob = { interface: "slack", userId: "U7", chatId: "C1", displayName: "Bob" }

describe.each(databases)("pairing codes on $dialect", ({ layer }) => {
  const store = storeOn(layer)

  it("the alphabet has no I, O, 0 or 1, and the pattern accepts exactly KERN- and four of its characters", () => {
    for (const confusable of ["I", "O", "0", "1"]) expect(codeAlphabet).not.toContain(confusable)
    expect(codeAlphabet).toHaveLength(32)
    for (const char of codeAlphabet) expect(codePattern.test(`KERN-${char.repeat(4)}`)).toBe(true)
    for (const bad of ["KERN-I234", "KERN-O234", "KERN-0234", "KERN-1234", "KERN-ABC", "KERN-ABCDE", "kern-ABCD"]) {
      expect(codePattern.test(bad)).toBe(false)
    }
  })

  it.effect("300 strangers get 300 distinct codes from the alphabet, one live code each", () =>
    Effect.gen(function*() {
      const pairings = yield* PairingStore
      const codes = new Set<string>()
      for (let i = 0; i < 300; i++) {
        const p = yield* pairings.request({ interface: "telegram", userId: `u${i}`, chatId: `c${i}` })
        expect(p.code).toMatch(codePattern)
        codes.add(p.code)
        // Writing again while the code lives gives the same code, not a second one.
        expect((yield* pairings.request({ interface: "telegram", userId: `u${i}`, chatId: `c${i}` })).code).toBe(p.code)
      }
      expect(codes.size).toBe(300)
      expect((yield* pairings.list).length).toBe(300)
    }).pipe(Effect.provide(store)))

  it.effect("a code expires after 24 h on the Clock: refused then, and the user's next message gets a new one", () =>
    Effect.gen(function*() {
      const pairings = yield* PairingStore
      const first = yield* pairings.request(alice)
      expect(first.expiresAtMs).toBe(codeLifetimeMs)
      yield* TestClock.adjust(codeLifetimeMs - 1)
      expect((yield* pairings.request(alice)).code).toBe(first.code)
      yield* TestClock.adjust(1)
      const expired = yield* Effect.flip(pairings.approve(first.code, "operator"))
      expect(expired.reason).toBe("expired_code")
      expect(expired.message).toContain("expired")
      const second = yield* pairings.request(alice)
      expect(second.code).not.toBe(first.code)
      expect(second.expiresAtMs).toBe(2 * codeLifetimeMs)
      expect((yield* pairings.list).length).toBe(1)
      expect((yield* Effect.flip(pairings.approve(first.code, "operator"))).reason).toBe("unknown_code")
      const { changed } = yield* pairings.approve(second.code, "operator")
      expect(changed).toBe(true)
      // An approved user keeps their pairing however long it has been.
      yield* TestClock.adjust(10 * codeLifetimeMs)
      expect((yield* pairings.request(alice)).status).toBe("approved")
    }).pipe(Effect.provide(store)))
})

describe.each(databases)("users: roles, scopes, revoke on $dialect", ({ layer }) => {
  const store = storeOn(layer)

  it.effect("a stranger has no scope; an approved user has read; scope and promote change it, capped by the config", () =>
    Effect.gen(function*() {
      const pairings = yield* PairingStore
      const pending = yield* pairings.request(alice)
      assert.isTrue(Option.isNone(yield* pairings.scopeFor("telegram", "42", "full")))
      yield* pairings.approve(pending.code, "operator")
      expect(yield* pairings.scopeFor("telegram", "42", "full")).toEqual(Option.some("read"))
      yield* pairings.setScope("telegram:42", "full")
      expect(yield* pairings.scopeFor("telegram", "42", "full")).toEqual(Option.some("full"))
      expect(yield* pairings.scopeFor("telegram", "42", "write")).toEqual(Option.some("write"))
      yield* pairings.setScope("telegram:42", "read")
      const promoted = yield* pairings.promote("telegram:42")
      expect(promoted.role).toBe("operator")
      // An operator has the config's toolScope, whatever their own says.
      expect(yield* pairings.scopeFor("telegram", "42", "full")).toEqual(Option.some("full"))
      expect(yield* pairings.scopeFor("telegram", "42", "write")).toEqual(Option.some("write"))
    }).pipe(Effect.provide(store)))

  it.effect("promote and scope refuse a pending user, a malformed id and an unknown one, each saying which", () =>
    Effect.gen(function*() {
      const pairings = yield* PairingStore
      yield* pairings.request(bob)
      expect((yield* Effect.flip(pairings.promote("slack:U7"))).reason).toBe("not_approved")
      expect((yield* Effect.flip(pairings.setScope("slack:U7", "write"))).reason).toBe("not_approved")
      const malformed = yield* Effect.flip(pairings.promote("U7"))
      expect(malformed.reason).toBe("invalid_id")
      expect(malformed.message).toContain("<channel>:<id>")
      expect((yield* Effect.flip(pairings.revoke("slack:nobody"))).reason).toBe("unknown_user")
      expect((yield* pairings.list)[0]?.role).toBe("user")
    }).pipe(Effect.provide(store)))

  it.effect("revoke forgets a user: not approved any more, and writing again starts a new pending code", () =>
    Effect.gen(function*() {
      const pairings = yield* PairingStore
      const first = yield* pairings.request(alice)
      yield* pairings.approve(first.code, "operator")
      yield* pairings.revoke("telegram:42")
      expect(yield* pairings.isApproved("telegram", "42")).toBe(false)
      assert.isTrue(Option.isNone(yield* pairings.scopeFor("telegram", "42", "full")))
      const again = yield* pairings.request(alice)
      expect(again.status).toBe("pending")
      expect((yield* Effect.flip(pairings.approve(first.code, "operator"))).reason).toBe("unknown_code")
    }).pipe(Effect.provide(store)))

  it.effect("a pairing made before migration 0200 keeps its status and becomes a user with no expiry", () =>
    Effect.gen(function*() {
      const file = NodePath.join(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "kern-users-")), "kern.db")
      const before = Object.fromEntries(Object.entries(migrations).filter(([id]) => id < "0200"))
      yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql`INSERT INTO pairings (code, interface, user_id, chat_id, status, requested_at_ms) VALUES
          ('KERN-ABCD', 'telegram', '9', '9', 'pending', 0)`).pipe(Effect.provide(Database.layer({ filename: file, migrations: before })))
      const rows = yield* Effect.flatMap(PairingStore, (p) => p.list).pipe(
        Effect.provide(PairingStore.Default.pipe(Layer.provideMerge(Database.layer({ filename: file }))))
      )
      expect(rows.map((r) => [r.code, r.status, r.role, r.toolScope, r.expiresAtMs])).toEqual([["KERN-ABCD", "pending", "user", null, null]])
    }))
})

describe("USERS.md mirror", () => {
  it("replaces only its marked section; appends it to a file that has none", () => {
    const section = `${usersBegin}\nnew\n${usersEnd}`
    expect(mergeUsersFile("# Mine\n\nhand text\n", section)).toBe(`# Mine\n\nhand text\n\n${section}\n`)
    const existing = `# Mine\n\n${usersBegin}\nold\n${usersEnd}\n\n## After\nkept\n`
    expect(mergeUsersFile(existing, section)).toBe(`# Mine\n\n${section}\n\n## After\nkept\n`)
    expect(mergeUsersFile("", section)).toBe(`${section}\n`)
  })

  it.effect("syncUsersFile lists approved users with channel, id, role and scope; never a pending code", () => {
    const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "kern-users-"))
    NodeFs.mkdirSync(NodePath.join(dir, ".kern"))
    NodeFs.writeFileSync(NodePath.join(dir, ".kern/config.json"), JSON.stringify({ toolScope: "write" }))
    NodeFs.writeFileSync(NodePath.join(dir, "USERS.md"), "# USERS.md\n\n## Operator\n- **Name:** Ada\n")
    const platform = Layer.merge(NodeContext.layer, Layer.succeed(ProcessEnv, {}))
    const layer = Layer.mergeAll(store, AgentConfig.layer(dir).pipe(Layer.provide(platform)), platform)
    return Effect.gen(function*() {
      const pairings = yield* PairingStore
      const a = yield* pairings.request(alice)
      const b = yield* pairings.request(bob)
      yield* pairings.approve(a.code, "operator")
      yield* pairings.setScope("telegram:42", "full")
      yield* syncUsersFile
      yield* syncUsersFile
      const text = NodeFs.readFileSync(NodePath.join(dir, "USERS.md"), "utf8")
      expect(text.startsWith("# USERS.md\n\n## Operator\n- **Name:** Ada\n\n")).toBe(true)
      expect(text).toContain("| Alice | telegram | telegram:42 | user | write |")
      expect(text).toContain("tool scope write")
      expect(text).not.toContain("Bob")
      expect(text).not.toContain(b.code)
      expect(text.split(usersBegin)).toHaveLength(2)
    }).pipe(Effect.provide(layer))
  })
})
