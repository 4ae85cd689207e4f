import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodePath from "node:path"
import type { Page } from "playwright-core"
import { launchChromium, screenshot, watchPageErrors } from "../../support/browser.js"
import { testDist } from "../../support/build.js"
import { FakeReply, type FakeModelServerShape } from "../../support/fakeModelServer.js"
import { bearer, request, startServer } from "./harness.js"

// ask_user_question in the web UI against the real server on a fake model, in real headless Chromium: the page's
// event stream (`/events?questions=web`) makes the web UI a surface for web turns while it is open.

const webRoot = NodePath.join(testDist, "web")
const use = <A>(f: () => Promise<A>) => Effect.promise(f)

/** Waits until the model has been asked `count` times (the tool's result goes back in the next request). */
const modelRequests = (model: FakeModelServerShape, count: number) =>
  Effect.gen(function*() {
    for (let i = 0; i < 600; i++) {
      const requests = yield* model.modelRequests
      if (requests.length >= count) return requests
      yield* Effect.sleep("100 millis")
    }
    throw new Error(`the model was asked fewer than ${count} times`)
  })

const offersAsk = (body: unknown) => JSON.stringify(body).includes("ask_user_question")

describe("ask_user_question in the web UI", () => {
  it.live("a page shows the question; clicking an option answers it and the turn goes on with the answer", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* startServer({ webRoot })
      yield* server.model.reply(
        FakeReply.toolCalls([{
          id: "call_1",
          name: "ask_user_question",
          args: { question: "Which branch should I deploy?", options: ["main", "staging"] }
        }]),
        FakeReply.text("Deploying staging.")
      )
      const browser = yield* Effect.acquireRelease(use(launchChromium), (b) => Effect.promise(() => b.close()))
      const page: Page = yield* use(() => browser.newPage({ viewport: { width: 1100, height: 800 } }))
      const errors = watchPageErrors(page)
      const issued = yield* request(`${server.base}/auth/ticket`, { method: "POST", headers: bearer })
      const { url } = issued.json as { url: string }
      yield* use(async () => {
        await page.goto(url)
        await page.getByText("connected", { exact: true }).waitFor()
        const box = page.getByRole("textbox", { name: "Message to the agent" })
        await box.fill("deploy it")
        await box.press("Enter")
        const dialog = page.getByRole("dialog", { name: "Which branch should I deploy?" })
        await dialog.waitFor({ timeout: 60_000 })
        await screenshot(page, "question-01-asked")
        await dialog.getByRole("button", { name: "staging" }).click()
        await dialog.waitFor({ state: "detached" })
        await page.locator("article.msg-done", { hasText: "Deploying staging." }).waitFor({ timeout: 60_000 })
      })
      const requests = yield* modelRequests(server.model, 2)
      expect(offersAsk(requests[0]?.body)).toBe(true)
      expect(JSON.stringify(requests[1]?.body)).toContain("staging")
      expect(errors.filter((e) => /Uncaught|TypeError|ReferenceError/.test(e))).toEqual([])
    })), 180_000)

  it.live("without a page open a web turn is not offered ask_user_question", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* startServer({ webRoot })
      yield* server.model.reply(FakeReply.text("Fine."))
      const sent = yield* request(`${server.base}/message`, {
        method: "POST",
        headers: { ...bearer, "content-type": "application/json" },
        body: JSON.stringify({ text: "hello" })
      })
      expect(sent.status).toBe(202)
      const requests = yield* modelRequests(server.model, 1)
      expect(offersAsk(requests[0]?.body)).toBe(false)
    })), 120_000)
})
