import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeCrypto from "node:crypto"
import { agentFolder, pair, startAgent } from "../channels/telegram/harness.js"
import { FakeReply, make as makeFakeModel } from "../support/fakeModelServer.js"
import { make as makeFakeTelegram } from "../support/fakeTelegram.js"
import { toolResultsById } from "../support/modelRequests.js"

// The message tool's `file` by media id reaches only the files of the conversation the turn answers: a paired user's
// turn cannot send another user's file by knowing or guessing its id, nor reach the store's bytes by a path. A file
// of another conversation reads exactly as one that does not exist, so the answer tells nothing about other people.

const alice = { id: 42, first_name: "Alice", username: "alice" }
const bob = { id: 43, first_name: "Bob", username: "bob" }

const sha = (bytes: Uint8Array) => NodeCrypto.createHash("sha256").update(bytes).digest("hex")
const idOf = (bytes: Uint8Array) => `med_${sha(bytes).slice(0, 24)}`

describe("the message tool's media ids, by conversation", () => {
  it.scopedLive("a user's turn sends its own file; another user's by id, guessed ids, and paths into .kern/media are refused alike", () =>
    Effect.gen(function*() {
      const model = yield* makeFakeModel
      const telegram = yield* makeFakeTelegram()
      const dir = agentFolder(model)
      const agent = yield* startAgent(dir, telegram)
      yield* pair(agent, alice)
      yield* pair(agent, bob)
      // Bob may use the message tool (`kern users scope telegram:43 write`): the rule under test is the file's, not the tool's.
      yield* agent.pairings.setScope("telegram:43", "write")

      const aliceBytes = new TextEncoder().encode("alice's payslip: 4200\n")
      const bobBytes = new TextEncoder().encode("bob's shopping list\n")
      const aliceId = idOf(aliceBytes)
      const bobId = idOf(bobBytes)
      const aliceSha = sha(aliceBytes)

      yield* model.reply(FakeReply.text("Kept your payslip."))
      yield* telegram.fileMessage({
        from: alice,
        document: { file_id: yield* telegram.addFile(aliceBytes), file_unique_id: "a", file_name: "payslip.txt", file_size: aliceBytes.length }
      })
      yield* telegram.awaitChat(alice.id, (messages) => messages.some((m) => m.text.includes("Kept your payslip.")))

      const guessed = `med_${"0123456789abcdef01234567"}`
      const corpus: Record<string, string> = {
        theirs: aliceId,
        guessed,
        upper: aliceId.toUpperCase(),
        short: aliceId.slice(0, -1),
        longer: `${aliceId}0`,
        dotted: `${aliceId}/../../.kern/media/${aliceSha}`,
        spaced: ` ${aliceId}`,
        store: `.kern/media/${aliceSha}`,
        absolute: `${dir}/.kern/media/${aliceSha}`,
        climb: `../agent/.kern/media/${aliceSha}`,
        artifact: `art_${aliceSha.slice(0, 24)}`
      }
      yield* model.reply(
        FakeReply.toolCalls([
          ...Object.entries(corpus).map(([id, file]) => ({ id, name: "message", args: { text: "here", file } })),
          { id: "own", name: "message", args: { text: "your list", file: bobId } },
          { id: "toAlice", name: "message", args: { userId: "42", interface: "telegram", text: "hi", file: bobId } }
        ]),
        FakeReply.text("Done.")
      )
      yield* telegram.fileMessage({
        from: bob,
        caption: "send me back my list, and alice's payslip",
        document: { file_id: yield* telegram.addFile(bobBytes), file_unique_id: "b", file_name: "list.txt", file_size: bobBytes.length }
      })
      yield* telegram.awaitChat(bob.id, (messages) => messages.some((m) => m.text.includes("Done.")))

      const requests = yield* model.modelRequests
      const results = toolResultsById(requests.at(-1)!.body)
      expect(results.own).toContain("\"sent\": true")
      for (const id of Object.keys(corpus)) {
        expect(results[id], `${id}: ${corpus[id]}`).not.toContain("\"sent\": true")
        expect(results[id], id).toMatch(/NOT_FOUND|PERMISSION_DENIED/)
        expect(results[id], id).not.toContain("4200")
      }
      // Alice's file and a made-up id answer the same words: whether a file exists elsewhere is not told.
      expect(results.theirs!.replace(aliceId, "<id>")).toBe(results.guessed!.replace(guessed, "<id>"))
      expect(results.theirs).toContain(`no file ${aliceId} in this conversation`)
      // Bob's turn reaches only Bob's chat, with a file or without.
      expect(results.toAlice).toContain("PERMISSION_DENIED")

      const uploads = yield* telegram.uploads
      expect(uploads.map((upload) => ({ chatId: upload.chatId, text: new TextDecoder().decode(upload.bytes) }))).toEqual([
        { chatId: String(bob.id), text: "bob's shopping list\n" }
      ])
      const links = (yield* agent.sql`SELECT media_id, conversation_id FROM media_links ORDER BY conversation_id`) as ReadonlyArray<{ mediaId: string; conversationId: string }>
      expect(links.map((row) => [row.mediaId, row.conversationId])).toEqual([[aliceId, "telegram-42"], [bobId, "telegram-43"]])
      yield* agent.stop
    }))
})
