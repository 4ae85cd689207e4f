import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { FileInfo } from "../../../../src/channels/AgentEvent.js"
import { decodeFile, fileDetails, isThumbnail, mediaUrl, refusal } from "../../../../src/channels/web/ui/attachments.js"
import { addSent, emptyChat } from "../../../../src/channels/web/ui/chatState.js"
import { itemsFromMessages } from "../../../../src/channels/web/ui/historyItems.js"
import { Attachment } from "../../../../src/session/messages.js"

const id = `med_${"ab12".repeat(6)}`
const at = "2026-11-27T10:00:00.000Z"
const pdf = new Attachment({ id, name: "lease.pdf", mediaType: "application/pdf", kind: "pdf", bytes: 2048, pages: 3, text: "[page 1]\nrent" })
const encoded = (a: Attachment) => Schema.encodeSync(Attachment)(a) as unknown as Record<string, never>

describe("files in the page", () => {
  it("decodes the session's Attachment and the events' FileInfo alike; only a media id ever becomes a URL", () => {
    const file = decodeFile(encoded(pdf))
    expect(file).toEqual({ id, name: "lease.pdf", mediaType: "application/pdf", kind: "pdf", bytes: 2048, pages: 3 })
    expect(decodeFile(Schema.encodeSync(FileInfo)({ id, name: "a.png", mediaType: "image/png", kind: "image", bytes: 5 }) as never)).toMatchObject({ id })
    expect(mediaUrl(file!)).toBe(`media/${id}`)
    expect(fileDetails(file!)).toBe("2.0 KB · 3 pages")
    for (const bad of ["../../.kern/kern.db", "/etc/passwd", `${id}/../x`, `MED_${"ab12".repeat(6)}`, "javascript:alert(1)", `med_${"ab12".repeat(6)}?x`, 42, null]) {
      expect(decodeFile({ id: bad as never, name: "x", mediaType: "text/plain", kind: "text", bytes: 1 }), String(bad)).toBeUndefined()
    }
  })

  it("a thumbnail only for the raster images the server shows in place", () => {
    const of = (mediaType: string, kind = "image") => isThumbnail({ id, name: "x", mediaType, kind, bytes: 1 })
    expect(["image/png", "image/jpeg", "image/gif", "image/webp"].map((t) => of(t))).toEqual([true, true, true, true])
    expect([of("image/svg+xml"), of("text/html"), of("application/pdf", "pdf"), of("image/png", "file")]).toEqual([false, false, false, false])
  })

  it("refuses what the server would, in its words: one file over maxFileBytes, all over maxTurnBytes, an empty one", () => {
    const limits = { maxFileBytes: 1024 * 1024, maxTurnBytes: 2 * 1024 * 1024 }
    expect(refusal([{ name: "a.bin", size: 1024 * 1024 }], limits)).toBeUndefined()
    expect(refusal([{ name: "big.mov", size: 3 * 1024 * 1024 }], limits)).toBe(
      "big.mov is 3.0 MB; files over 1.0 MB are not taken (config media.maxFileBytes)"
    )
    expect(refusal([{ name: "a", size: 1024 * 1024 }, { name: "b", size: 1024 * 1024 }, { name: "c", size: 1 }], limits)).toBe(
      "these files are 2.0 MB together; a message may carry 2.0 MB (config media.maxTurnBytes)"
    )
    expect(refusal([{ name: "e.txt", size: 0 }], limits)).toBe("e.txt is empty")
    // Before /status has answered: only the empty file is known to be refused.
    expect(refusal([{ name: "big.mov", size: 3 * 1024 * 1024 }], undefined)).toBeUndefined()
  })

  it("a sent message's files join its item whichever came first, its incoming event or POST /message's answer", () => {
    const file = decodeFile(encoded(pdf))!
    const sentFirst = addSent(emptyChat, { messageId: "t1", text: "here", files: [file], at })
    expect(sentFirst.items[0]).toMatchObject({ kind: "user", messageId: "t1", files: [file] })
    const incomingFirst = { ...emptyChat, items: [{ kind: "user" as const, key: "in:t1", messageId: "t1", text: "here", interface: "web", at }] }
    expect(addSent(incomingFirst, { messageId: "t1", text: "here", files: [file], at }).items).toEqual([{ ...incomingFirst.items[0], files: [file] }])
  })

  it("history: a user message's attachments and the message tool's sent file", () => {
    const items = itemsFromMessages([
      { _tag: "user", text: "", attachments: [encoded(pdf), { id: "../x", name: "bad" }], at },
      { _tag: "assistant", text: "", toolCalls: [{ id: "c1", name: "message", params: { text: "t", file: "a.pdf" } }], at },
      // As the turn records a result: its JSON text.
      { _tag: "tool", toolCallId: "c1", toolName: "message", result: JSON.stringify({ sent: true, to: "this chat", file: encoded(pdf) }), isError: false, at }
    ], "h")
    expect(items[0]).toMatchObject({ kind: "user", files: [{ id, name: "lease.pdf", pages: 3 }] })
    expect(items[0]?.kind === "user" ? items[0].files : undefined).toHaveLength(1)
    expect(items[1]).toMatchObject({ kind: "assistant", parts: [{ kind: "tool", result: { file: { id, name: "lease.pdf" } } }] })
  })
})
