import { Effect, type Scope } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as FakeSlack from "../support/fakeSlack.js"
import * as FakeTelegram from "../support/fakeTelegram.js"
import { makeChaosAgent, pairSlack, pairTelegram } from "./chaosAgent.js"
import { makeEchoModel } from "./echoModel.js"
import { makeHttpClient } from "./httpClient.js"
import { makeSlackSender } from "./slackSender.js"
import { problems, readSessions, rowOf, table, toldTexts } from "./tally.js"
import { channelViews, makeTraffic, type Peers, slackUsers, telegramUsers } from "./traffic.js"

export const say = (line: string) => Effect.sync(() => process.stdout.write(`${line}\n`))

/**
 * The fakes, an agent folder on them, the agent started, its Telegram and Slack users paired (as people do: a code,
 * `kern pair`), and the traffic ready to send. `prepare` runs on the folder before the first start.
 */
export const setUp = (options: { readonly maxThinkMs: number; readonly prepare?: (dir: string) => Effect.Effect<void, never, Scope.Scope> }) =>
  Effect.gen(function*() {
    const model = yield* makeEchoModel(options.maxThinkMs)
    const telegram = yield* FakeTelegram.make()
    const slack = yield* FakeSlack.make()
    const agent = yield* makeChaosAgent(model.baseURL, telegram, slack)
    if (options.prepare !== undefined) yield* options.prepare(agent.dir)
    yield* say(`agent folder: ${agent.dir}`)
    yield* agent.start
    for (const user of telegramUsers) yield* pairTelegram(agent, telegram, user)
    for (const user of slackUsers) yield* pairSlack(agent, slack, user)
    const http = yield* makeHttpClient(agent.http)
    const slackSender = yield* makeSlackSender(slack)
    const peers: Peers = { telegram, slack, slackSender, http }
    const traffic = yield* makeTraffic(peers)
    return { agent, peers, traffic, model } as const
  })

type Run = Effect.Effect.Success<ReturnType<typeof setUp>>

/** Sends a message every `everyMs` until interrupted. */
export const sendEvery = (run: Run, everyMs: number) =>
  Effect.forkScoped(Effect.forever(Effect.zipRight(run.traffic.sendOne, Effect.sleep(`${everyMs} millis`))))

interface RuntimeStatus {
  readonly runtime?: { readonly inbox?: number; readonly queued?: number } | null
}

/** Waits until nothing is on its way: every update taken, every envelope acknowledged, every POST answered, the inbox and queue empty. */
export const drain = (run: Run) =>
  Effect.gen(function*() {
    const { agent, peers, traffic } = run
    const deadline = Date.now() + 180_000
    let quietSince = Date.now()
    let lastLines = -1
    while (Date.now() < deadline) {
      yield* Effect.sleep("500 millis")
      const sent = yield* traffic.sent
      const posts = (yield* peers.http.state).outcomes.size
      const unconfirmed = (yield* peers.telegram.unconfirmed).length
      const unacked = yield* peers.slackSender.unacknowledged
      const { base, token } = agent.http()
      const status = yield* Effect.promise(() =>
        fetch(`${base}/status`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.json() as Promise<RuntimeStatus>).catch(() => undefined)
      )
      const sessions = readSessions(NodePath.join(agent.dir, ".kern/sessions"))
      const lines = [...sessions.stored.values(), ...sessions.answered.values()].reduce((a, b) => a + b, 0)
      if (lines !== lastLines) {
        lastLines = lines
        quietSince = Date.now()
      }
      const busy = posts < sent.ht.length || unconfirmed > 0 || unacked > 0 || status?.runtime?.inbox !== 0 || status?.runtime?.queued !== 0
      // Quiet for 3 s with nothing on its way: the leftovers a start finishes in the background are done too.
      if (!busy && Date.now() - quietSince > 3_000) return true
    }
    return false
  })

/** Counts, prints the table and the problems; 0 when there are none. */
export const report = (run: Run, title: string) =>
  Effect.gen(function*() {
    yield* run.peers.http.finish
    const sessions = readSessions(NodePath.join(run.agent.dir, ".kern/sessions"))
    const views = yield* channelViews(run.peers, yield* run.traffic.sent)
    const rows = views.map((view) => rowOf(view, sessions))
    const found = problems(rows, sessions)
    const http = yield* run.peers.http.state
    yield* say(`\n${title}\n\n${table(rows)}\n`)
    yield* say(`http: ${[...http.live.keys()].filter((m) => m.includes("-ht-")).length} replies seen live on /events, ${[...http.recovered].filter((m) => m.includes("-ht-") && !http.live.has(m)).length} read back from /history after a reconnect; ${[...http.outcomes.values()].filter((o) => o._tag === "NoAnswer").length} POSTs got no answer`)
    yield* say(`slack: ${yield* run.peers.slackSender.redeliveries} envelopes sent again (not acknowledged in time, or the socket died)`)
    for (const told of toldTexts(views)) yield* say(`told: ${told}`)
    for (const problem of found) yield* say(`PROBLEM ${problem}`)
    // What the peers saw, beside the agent folder: where a problem's story is read.
    const evidence = NodePath.join(NodePath.dirname(run.agent.dir), "peers.jsonl")
    const lines = [
      ...(yield* run.peers.telegram.calls()).filter((c) => c.method !== "getUpdates" && c.method !== "sendChatAction")
        .map((c) => ({ peer: "telegram", at: c.atMs, method: c.method, body: c.body })),
      ...(yield* run.peers.slack.calls).map((c) => ({ peer: "slack", at: c.atMs, method: c.method, body: c.body })),
      ...(yield* run.peers.slack.acks).map((a) => ({ peer: "slack", at: a.atMs, method: "ack", body: { envelopeId: a.envelopeId } }))
    ].sort((a, b) => a.at - b.at)
    NodeFs.writeFileSync(evidence, lines.map((line) => JSON.stringify(line)).join("\n") + "\n")
    yield* say(`peers' calls: ${evidence}`)
    return { rows, found } as const
  })

/**
 * While traffic runs: when the sessions have not grown for 8 s while the agent is up and has messages waiting, says
 * so with its /status: a stalled agent is a finding, not a slow one.
 */
export const watchStalls = (run: Run) =>
  Effect.forkScoped(Effect.gen(function*() {
    let lastLines = -1
    let since = Date.now()
    let reported = false
    while (true) {
      yield* Effect.sleep("1 second")
      const sessions = readSessions(NodePath.join(run.agent.dir, ".kern/sessions"))
      const lines = [...sessions.stored.values(), ...sessions.answered.values()].reduce((a, b) => a + b, 0)
      if (lines !== lastLines) {
        lastLines = lines
        since = Date.now()
        reported = false
        continue
      }
      if (reported || Date.now() - since < 8_000) continue
      reported = true
      const { base, token } = run.agent.http()
      const status = yield* Effect.promise(() =>
        fetch(`${base}/status`, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(3_000) })
          .then((r) => r.json() as Promise<RuntimeStatus & { runtime?: { uptimeMs?: number } }>)
          .catch(() => undefined)
      )
      // Down or starting (a kill's gap) is no stall; up for 8 s with work waiting and nothing written is.
      const runtime = status?.runtime
      if (runtime === undefined || runtime === null || (runtime.uptimeMs ?? 0) < 8_000) {
        reported = false
        continue
      }
      if ((runtime.inbox ?? 0) + (runtime.queued ?? 0) > 0) {
        yield* say(`STALL: up ${runtime.uptimeMs} ms, no session line for 8 s at ${new Date().toISOString()}: ${JSON.stringify(runtime)}`)
      }
    }
  }))
