import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodePath from "node:path"
import sharp from "sharp"
import { screenshot } from "../../support/browser.js"
import { testDist } from "../../support/build.js"
import { FakeReply } from "../../support/fakeModelServer.js"
import { makePdf } from "../../support/pdfFiles.js"
import { bearer, request, startServer } from "./harness.js"
import { loggedInPage, pageErrors } from "./uiPage.js"

// Files through the web UI, end to end in real headless Chromium against the real server on a fake model: attached
// with the button, dropped and pasted, previewed and removable, checked against the server's caps before upload; the
// model gets the image as an image part and the PDF's text; the transcript shows a thumbnail and a download chip whose
// link returns the bytes with the media route's headers. A file's name is text, never markup.

const webRoot = NodePath.join(testDist, "web")
const use = <A>(f: () => Promise<A>) => Effect.promise(f)
const limits = { maxFileBytes: 200_000, maxTurnBytes: 250_000 }

/** Hands files to the page as a drop on the composer or a paste into its text box would (a DataTransfer of Files). */
const dispatchFiles = (event: "drop" | "paste", files: ReadonlyArray<{ name: string; type: string; bytes: ReadonlyArray<number> }>) =>
  `(() => {
    const data = new DataTransfer()
    for (const f of ${JSON.stringify(files)}) data.items.add(new File([new Uint8Array(f.bytes)], f.name, { type: f.type }))
    if (${JSON.stringify(event)} === "drop") {
      document.querySelector("form.composer").dispatchEvent(new DragEvent("drop", { dataTransfer: data, bubbles: true, cancelable: true }))
    } else {
      document.querySelector(".composer textarea").dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }))
    }
  })()`

// File names from the XSS corpus of the markdown tests: each must show as its own text.
const hostileNames = [
  "<img src=x onerror=\"window.pwned = 2\">.txt",
  "<svg onload=\"window.pwned = 5\"><circle r=\"1\"/></svg>.txt",
  "<a href=\"javascript:window.pwned=4\">link</a>.txt"
]

describe("files in the web UI", () => {
  it.live("attach an image and a PDF: the model gets them, the transcript shows them, the download returns the bytes", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* startServer({ webRoot, config: { recall: false, vision: true, media: limits } })
      yield* server.model.reply(FakeReply.text("A red square and a lease."), FakeReply.text("Named files, seen."))
      const photo = new Uint8Array(yield* use(() => sharp({ create: { width: 40, height: 30, channels: 3, background: "#c00" } }).png().toBuffer()))
      const pdf = makePdf(["The landlord is Quetzalcoatl Properties"])
      const { page, errors } = yield* loggedInPage(server.base)

      // Too big for one file, then too much together: refused in the composer with the caps in words, nothing added.
      const box = page.getByRole("textbox", { name: "Message to the agent" })
      const input = page.locator("input[type=file]")
      yield* use(async () => {
        await page.getByRole("button", { name: "Attach files" }).waitFor()
        await input.setInputFiles([{ name: "huge.bin", mimeType: "application/octet-stream", buffer: Buffer.alloc(300_000, 1) }])
        await page.getByRole("alert").filter({ hasText: "huge.bin is 293.0 KB; files over 195.3 KB are not taken (config media.maxFileBytes)" }).waitFor()
        await input.setInputFiles([
          { name: "a.bin", mimeType: "application/octet-stream", buffer: Buffer.alloc(150_000, 1) },
          { name: "b.bin", mimeType: "application/octet-stream", buffer: Buffer.alloc(150_000, 2) }
        ])
        await page.getByRole("alert").filter({ hasText: "a message may carry 244.1 KB (config media.maxTurnBytes)" }).waitFor()
      })
      expect(yield* use(() => page.locator(".pick-chip").count())).toBe(0)
      expect((yield* server.model.requests).filter((r) => r.path !== "/embeddings")).toEqual([])

      // A drop and a paste add chips (the pasted image previewed); each can be removed again.
      yield* use(async () => {
        await page.evaluate(dispatchFiles("drop", [{ name: "dropped.txt", type: "text/plain", bytes: [104, 105] }]))
        await page.evaluate(dispatchFiles("paste", [{ name: "image.png", type: "image/png", bytes: Array.from(photo) }]))
        await page.locator(".pick-chip", { hasText: "dropped.txt" }).waitFor()
        await page.locator(".pick-chip", { hasText: "image.png" }).locator("img.pick-preview").waitFor()
        await page.getByRole("button", { name: "Remove dropped.txt" }).click()
        await page.getByRole("button", { name: "Remove image.png" }).click()
        await page.locator(".pick-chip").first().waitFor({ state: "detached" })
      })

      // The attach button's input: an image and a PDF, sent with words.
      yield* use(async () => {
        await input.setInputFiles([
          { name: "square.png", mimeType: "image/png", buffer: Buffer.from(photo) },
          { name: "lease.pdf", mimeType: "application/pdf", buffer: Buffer.from(pdf) }
        ])
        await page.locator(".pick-chip", { hasText: "square.png" }).waitFor()
        await box.fill("here are the files")
        await box.press("Enter")
        await page.getByText("A red square and a lease.").waitFor()
      })
      const [asked] = yield* server.model.modelRequests
      const images = asked!.media.filter((m) => m.type === "image")
      expect(images).toHaveLength(1)
      expect(images[0]!.mediaType).toMatch(/^image\//)
      // The PDF as a file part (this provider takes PDFs), and its text extracted with the message (GET /history).
      const files = asked!.media.filter((m) => m.type === "file")
      expect(files.map((f) => [f.fileName, f.mediaType])).toEqual([["lease.pdf", "application/pdf"]])
      expect(Array.from(files[0]!.data)).toEqual(Array.from(pdf))
      const history = (yield* request(`${server.base}/history`, { headers: bearer })).json as {
        messages: ReadonlyArray<{ message: { _tag: string; attachments?: ReadonlyArray<{ name: string; text?: string; pages?: number }> } }>
      }
      const sent = history.messages.flatMap((m) => m.message.attachments ?? [])
      expect(sent.find((a) => a.name === "lease.pdf")).toMatchObject({ pages: 1 })
      expect(sent.find((a) => a.name === "lease.pdf")?.text).toContain("Quetzalcoatl Properties")

      // The transcript: the image as a thumbnail that loaded from media/<id>, the PDF as a chip with its size and pages.
      const thumb = page.locator(".msg-user .file-thumb img")
      yield* use(() => thumb.waitFor())
      const src = yield* use(() => thumb.getAttribute("src"))
      expect(src).toMatch(/^media\/med_[0-9a-f]{24}$/)
      yield* use(() => page.waitForFunction(`document.querySelector(".msg-user .file-thumb img")?.naturalWidth === 40`))
      const chip = page.getByRole("link", { name: "Download lease.pdf" })
      expect(yield* use(() => chip.textContent())).toBe(`lease.pdf${pdf.length} B · 1 page`)

      // The chip's link: the PDF's bytes, as a download with the route's headers.
      const href = yield* use(() => chip.getAttribute("href"))
      expect(href).toMatch(/^media\/med_[0-9a-f]{24}$/)
      const fetched = (yield* use(() =>
        page.evaluate(`(async () => {
          const response = await fetch(${JSON.stringify(href)})
          const headers = Object.fromEntries(["content-type", "content-disposition", "x-content-type-options", "content-security-policy"].map((h) => [h, response.headers.get(h)]))
          return { status: response.status, headers, bytes: Array.from(new Uint8Array(await response.arrayBuffer())) }
        })()`)
      )) as { status: number; headers: Record<string, string | null>; bytes: Array<number> }
      expect(fetched.status).toBe(200)
      expect(fetched.headers).toMatchObject({ "content-type": "application/pdf", "content-disposition": "attachment", "x-content-type-options": "nosniff" })
      expect(fetched.headers["content-security-policy"]).toContain("script-src 'none'")
      expect(fetched.bytes).toEqual(Array.from(pdf))
      const download = yield* use(async () => {
        const [d] = await Promise.all([page.waitForEvent("download"), chip.click()])
        const stream = await d.createReadStream()
        const chunks: Array<Buffer> = []
        for await (const chunk of stream) chunks.push(chunk as Buffer)
        return { name: d.suggestedFilename(), bytes: Buffer.concat(chunks) }
      })
      expect(download.name).toBe("lease.pdf")
      expect(download.bytes.equals(Buffer.from(pdf))).toBe(true)

      // Hostile names, dropped and sent: shown as their own text, nothing active in the transcript.
      yield* use(async () => {
        await page.evaluate(dispatchFiles("drop", hostileNames.map((name, i) => ({ name, type: "text/plain", bytes: [120 + i] }))))
        await page.locator(".pick-chip", { hasText: hostileNames[2]! }).waitFor()
        await box.fill("named files")
        await box.press("Enter")
        await page.getByText("Named files, seen.").waitFor()
        for (const name of hostileNames) await page.getByRole("link", { name: `Download ${name}` }).waitFor()
      })
      yield* use(() => page.reload())
      yield* use(() => page.getByRole("link", { name: `Download ${hostileNames[0]}` }).waitFor())
      yield* use(() => page.locator(".msg-user .file-thumb img").waitFor())
      const active = yield* use(() =>
        page.evaluate(`(() => {
          const found = []
          for (const el of document.querySelectorAll(".log .files *")) {
            if (!["LI", "A", "SPAN", "IMG"].includes(el.tagName)) found.push(el.tagName)
            for (const attr of el.attributes) if (attr.name.startsWith("on") || /^\\s*javascript:/i.test(attr.value)) found.push(el.tagName + " " + attr.name)
          }
          return { found, pwned: window.pwned ?? null }
        })()`)
      )
      expect(active).toEqual({ found: [], pwned: null })
      yield* use(() => screenshot(page, "media-files"))
      expect(pageErrors(errors)).toEqual([])
    })), 240_000)

  it.live("a file the agent sends into the web chat shows as a download chip, live and after a reload", () =>
    Effect.scoped(Effect.gen(function*() {
      const report = "week 48: all green\n"
      const server = yield* startServer({ webRoot, config: { recall: false }, files: { "reports/week.txt": report } })
      yield* server.model.reply(
        FakeReply.toolCalls([{ id: "call_1", name: "message", args: { text: "the report", file: "reports/week.txt" } }]),
        FakeReply.text("Sent you the report.")
      )
      const { page, errors } = yield* loggedInPage(server.base)
      yield* use(async () => {
        const box = page.getByRole("textbox", { name: "Message to the agent" })
        await box.fill("send me the report")
        await box.press("Enter")
        await page.getByText("Sent you the report.").waitFor()
        await page.getByRole("link", { name: "Download week.txt" }).waitFor()
        await page.reload()
        await page.getByRole("link", { name: "Download week.txt" }).waitFor()
      })
      const href = yield* use(() => page.getByRole("link", { name: "Download week.txt" }).first().getAttribute("href"))
      const fetched = (yield* use(() =>
        page.evaluate(`fetch(${JSON.stringify(href)}).then(async (r) => ({ status: r.status, type: r.headers.get("content-type"), disposition: r.headers.get("content-disposition"), text: await r.text() }))`)
      )) as { status: number; type: string; disposition: string; text: string }
      expect(fetched).toEqual({ status: 200, type: "text/plain", disposition: "attachment", text: report })
      expect(pageErrors(errors)).toEqual([])
    })), 240_000)
})
