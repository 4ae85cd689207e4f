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

// kern serve's host page in real headless Chromium against a real `kern serve`: log in with the host token, see the
// agents and their state (a hostile problem shown as text), open one through the host's hand-over, switch to another
// with the picker in its header, send a message there and see that agent's answer; no token in a URL or the page's
// storage, each cookie scoped where it belongs.

const env = { OPENROUTER_API_KEY: "sk-test" }
const use = <A>(f: () => Promise<A>) => Effect.promise(f)
// Problems carry the folder's path: hostile names (no slash, so each is one folder) from the markdown tests' XSS corpus.
const hostile = [
  "<img src=x onerror=\"window.pwned=1\">",
  "<svg onload=\"window.pwned = 5\"><circle r=\"1\">",
  "<details open ontoggle=\"window.pwned = 10\">x",
  "\"><iframe src=javascript:window.pwned=6>"
]

describe("kern serve's host page in the browser", () => {
  it.live("logs into the host, opens an agent, switches with the picker and talks to the other", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* makeFakeServer
      const alpha = initAgentWithModel(server.baseURL, { heartbeatInterval: 0, autoCommit: false, recall: false })
      const beta = initAgentWithModel(server.baseURL, { heartbeatInterval: 0, autoCommit: false, recall: false })
      NodeFs.appendFileSync(NodePath.join(beta, "KNOWLEDGE.md"), "\nThe beta marker is BETA-7342.\n")
      const bad = Object.fromEntries(hostile.map((name, i) => {
        const dir = NodePath.join(makeTempDir(), name)
        NodeFs.mkdirSync(dir)
        return [`bad${i}`, dir]
      }))
      const home = makeTempDir()
      const config = NodePath.join(home, "host.json")
      NodeFs.writeFileSync(config, JSON.stringify({ agents: { alpha, beta, ...bad }, port: 0 }))

      const host = yield* startHost(config, env)
      const { origin } = host
      const hostEnv = NodePath.join(home, ".kern-host/.env")
      expect(yield* eventually(() => (envValue(hostEnv, "KERN_HOST_TOKEN") ?? "") !== ""), host.stderr()).toBe(true)
      const token = envValue(hostEnv, "KERN_HOST_TOKEN")!

      const browser = yield* Effect.acquireRelease(use(launchChromium), (b) => Effect.promise(() => b.close()))
      const page = yield* use(() => browser.newPage({ viewport: { width: 1100, height: 800 } }))
      const errors = watchPageErrors(page)
      const visited: Array<string> = []
      page.on("request", (request) => visited.push(request.url()))

      // The host page: a login first; the token goes in once and is kept nowhere.
      yield* use(async () => {
        await page.goto(`${origin}/`)
        const field = page.getByLabel("Host token")
        await field.fill(token)
        await page.getByRole("button", { name: "Log in" }).click()
        await page.getByRole("button", { name: "Open alpha" }).waitFor()
        await page.getByRole("button", { name: "Open beta" }).waitFor()
      })
      expect(yield* use(() => page.getByLabel("alpha is passive").count())).toBe(1)
      yield* use(() => page.getByText("6 agents: 6 passive").waitFor())

      // Folders that cannot run: their problems arrive live, as text.
      for (const [i, text] of hostile.entries()) {
        // Woken by the host's credentials (an agent's route wakes nobody for a caller without that agent's own).
        expect((yield* use(() => fetch(`${origin}/host/open/bad${i}`, { method: "POST", headers: { authorization: `Bearer ${token}` } }))).status).toBe(503)
        yield* use(() => page.locator(".host-problem").filter({ hasText: text }).waitFor())
      }
      yield* use(() => screenshot(page, "host-page"))
      const active = ".host-agents img, .host-agents svg, .host-agents iframe, .host-agents details"
      expect(yield* use(() => page.evaluate("window.pwned"))).toBeUndefined()
      expect(yield* use(() => page.locator(active).count())).toBe(0)

      // Opened through the host's hand-over: alpha's page, with alpha's own session.
      yield* use(async () => {
        await page.getByRole("button", { name: "Open alpha" }).click()
        await page.waitForURL(`${origin}/agents/alpha/`)
        await page.getByText("connected", { exact: true }).waitFor()
      })

      // The picker lists the others; beta opens the same way, and the message typed there reaches beta.
      yield* server.reply(FakeReply.text("Beta answers through the picker."))
      yield* use(async () => {
        await page.getByLabel("Switch agent").click()
        await page.locator(".picker-problem").filter({ hasText: hostile[0]! }).waitFor()
      })
      expect(yield* use(() => page.locator(".picker-menu img, .picker-menu svg, .picker-menu iframe, .picker-menu details").count())).toBe(0)
      expect(yield* use(() => page.evaluate("window.pwned"))).toBeUndefined()
      yield* use(async () => {
        await page.getByRole("button", { name: "beta", exact: true }).click()
        await page.waitForURL(`${origin}/agents/beta/`)
        await page.getByText("connected", { exact: true }).waitFor()
        const box = page.getByRole("textbox", { name: "Message to the agent" })
        await box.fill("what is your marker?")
        await box.press("Enter")
        await page.getByText("Beta answers through the picker.").waitFor()
      })
      yield* use(() => screenshot(page, "host-picker-beta"))
      expect(yield* eventuallyEffect(Effect.map(server.modelRequests, (r) => r.length >= 1))).toBe(true)
      expect(JSON.stringify((yield* server.modelRequests)[0]!.body)).toContain("BETA-7342")
      expect(yield* use(() => page.getByLabel("Switch agent").count())).toBe(1)

      // Back to the host page from the picker: still logged in, both opened agents live.
      yield* use(async () => {
        await page.getByLabel("Switch agent").click()
        await page.getByRole("link", { name: "All agents" }).click()
        await page.waitForURL(`${origin}/`)
        await page.getByText("6 agents: 2 live, 4 passive").waitFor()
      })

      // Each cookie where it belongs: the host's for the whole server, each agent's for its own path; all HttpOnly.
      const cookies = yield* use(() => page.context().cookies())
      const byName = cookies.map((c) => `${c.name} ${c.path} ${c.httpOnly} ${c.sameSite}`).sort()
      expect(byName).toEqual([
        "kern_host_session / true Strict",
        "kern_session /agents/alpha/ true Strict",
        "kern_session /agents/beta/ true Strict"
      ])
      for (const cookie of cookies) expect(cookie.value).not.toBe(token)
      // No token in a URL the page visited, nor in its storage.
      expect(visited.filter((url) => url.includes(token))).toEqual([])
      const stored = yield* use(() => page.evaluate<string>("JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage })"))
      expect(stored).not.toContain(token)
      expect(errors.filter((e) => /Content Security Policy|Uncaught|TypeError|ReferenceError/.test(e))).toEqual([])
    })), 180_000)
})
