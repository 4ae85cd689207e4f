import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { initAgentWithModel } from "../support/agentFolder.js"
import { launchChromium, screenshot, watchPageErrors } from "../support/browser.js"
import { FakeReply, make as makeFakeServer } from "../support/fakeModelServer.js"
import { envValue, startHost } from "../support/hostServe.js"
import { makeTempDir } from "../support/tempDir.js"
import { eventually, eventuallyEffect } from "../support/waitFor.js"

// The web UI of a hosted agent, in real headless Chromium against a real `kern serve`: under /agents/<name>/ its
// login, assets, requests and event stream all stay under that prefix; a message typed there reaches that agent
// (woken by it) and its answer streams back; the login opens that agent only, never the one beside it.

const env = { OPENROUTER_API_KEY: "sk-test" }
const use = <A>(f: () => Promise<A>) => Effect.promise(f)

describe("kern serve in the browser", () => {
  it.live("a hosted agent's web UI works under its prefix, and its login opens no other agent", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const alpha = initAgentWithModel(server.baseURL, { heartbeatInterval: 0, autoCommit: false, recall: false })
      const beta = initAgentWithModel(server.baseURL, { heartbeatInterval: 0, autoCommit: false, recall: false })
      NodeFs.appendFileSync(NodePath.join(alpha, "KNOWLEDGE.md"), "\nThe alpha marker is ALPHA-5150.\n")
      const home = makeTempDir()
      const config = NodePath.join(home, "host.json")
      NodeFs.writeFileSync(config, JSON.stringify({ agents: { alpha, beta }, port: 0 }))

      const host = yield* startHost(config, env)
      const { origin } = host
      const alphaEnv = NodePath.join(alpha, ".kern/.env")
      expect(yield* eventually(() => (envValue(alphaEnv, "KERN_AUTH_TOKEN") ?? "") !== ""), host.stderr()).toBe(true)
      const token = envValue(alphaEnv, "KERN_AUTH_TOKEN")!

      const ticket = yield* use(async () => {
        const response = await fetch(`${origin}/agents/alpha/auth/ticket`, { method: "POST", headers: { authorization: `Bearer ${token}` } })
        return { status: response.status, body: (await response.json()) as { url: string } }
      })
      expect(ticket.status).toBe(200)
      expect(ticket.body.url.startsWith(`${origin}/agents/alpha/auth?ticket=`), ticket.body.url).toBe(true)

      const browser = yield* Effect.acquireRelease(use(launchChromium), (b) => Effect.promise(() => b.close()))
      const page = yield* use(() => browser.newPage({ viewport: { width: 1100, height: 800 } }))
      const errors = watchPageErrors(page)
      const requested: Array<string> = []
      page.on("request", (request) => requested.push(request.url()))
      yield* server.reply(FakeReply.text("Alpha answers in the browser."))
      yield* use(async () => {
        await page.goto(ticket.body.url)
        await page.getByText("connected", { exact: true }).waitFor()
        const box = page.getByRole("textbox", { name: "Message to the agent" })
        await box.fill("what is your marker?")
        await box.press("Enter")
        await page.getByText("Alpha answers in the browser.").waitFor()
      })
      yield* use(() => screenshot(page, "host-alpha"))
      expect(page.url()).toBe(`${origin}/agents/alpha/`)
      expect(yield* eventuallyEffect(Effect.map(server.modelRequests, (r) => r.length >= 1))).toBe(true)
      expect(JSON.stringify((yield* server.modelRequests)[0]!.body)).toContain("ALPHA-5150")

      // Everything the page asked for stayed under alpha's prefix (its assets, its API, its event stream), but the
      // picker's one question to the host (the agents' list, refused here: this browser has no host session).
      const own = requested.filter((url) => url.startsWith(origin))
      expect(own.length).toBeGreaterThan(3)
      expect(own.filter((url) => !url.startsWith(`${origin}/agents/alpha/`) && url !== `${origin}/agents`)).toEqual([])
      expect(yield* use(() => page.getByLabel("Switch agent").count())).toBe(0)
      // The browser's session is alpha's: its cookie is scoped to alpha's path and opens nothing of beta's.
      const cookies = yield* use(() => page.context().cookies())
      expect(cookies.length).toBeGreaterThan(0)
      for (const cookie of cookies) expect(cookie.path).toBe("/agents/alpha/")
      const betaStatus = yield* use(() => page.evaluate(async () => (await fetch("/agents/beta/status")).status))
      expect(betaStatus).toBe(401)
      expect(errors.filter((e) => /Content Security Policy|Uncaught|TypeError|ReferenceError/.test(e))).toEqual([])
    })), 180_000)
})
