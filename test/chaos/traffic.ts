import { Effect, Ref } from "effect"
import type { FakeSlack } from "../support/fakeSlack.js"
import type { FakeTelegram, FakeUser } from "../support/fakeTelegram.js"
import { markerPattern } from "./echoModel.js"
import type { HttpClient, PostOutcome } from "./httpClient.js"
import type { SlackSender } from "./slackSender.js"
import type { ChannelView } from "./tally.js"

export const telegramUsers: ReadonlyArray<FakeUser> = [{ id: 101, first_name: "Tia" }, { id: 102, first_name: "Teo" }]
export const slackUsers: ReadonlyArray<string> = ["U1", "U2"]
export const httpChannels: ReadonlyArray<string> = ["chaos-a", "chaos-b"]

export interface Peers {
  readonly telegram: FakeTelegram
  readonly slack: FakeSlack
  readonly slackSender: SlackSender
  readonly http: HttpClient
}

/** The markers sent on each channel, in order. */
export interface Sent {
  readonly tg: ReadonlyArray<string>
  readonly sl: ReadonlyArray<string>
  readonly ht: ReadonlyArray<string>
}

/** The six senders (two per channel) in turn: each call sends the next one's message. */
export const makeTraffic = (peers: Peers) =>
  Effect.gen(function*() {
    const sent = yield* Ref.make<Sent>({ tg: [], sl: [], ht: [] })
    const turn = yield* Ref.make(0)
    const mark = (kind: "tg" | "sl" | "ht") =>
      Ref.modify(sent, (s): [string, Sent] => {
        const marker = `CHAOS-${kind}-${String(s[kind].length + 1).padStart(4, "0")}`
        return [marker, { ...s, [kind]: [...s[kind], marker] }]
      })
    const sendOne = Effect.gen(function*() {
      const n = yield* Ref.getAndUpdate(turn, (t) => t + 1)
      const who = n % 6
      if (who < 2) {
        const user = telegramUsers[who]!
        const marker = yield* mark("tg")
        yield* peers.telegram.message({ from: user, text: `note ${marker} from ${user.first_name}` })
      } else if (who < 4) {
        const user = slackUsers[who - 2]!
        const marker = yield* mark("sl")
        yield* peers.slackSender.send(marker, user, `note ${marker} from ${user}`)
      } else {
        const channel = httpChannels[who - 4]!
        const marker = yield* mark("ht")
        // Not awaited: a POST to a killed agent may hang until its socket closes, and the rate must hold.
        yield* Effect.forkDaemon(peers.http.post(marker, `note ${marker} on ${channel}`, channel))
      }
    })
    return { sendOne, sent: Ref.get(sent) } as const
  })

const markers = (text: string) => [...text.matchAll(markerPattern)].map((m) => m[0])

const replyView = (name: string, sent: ReadonlyArray<string>, texts: ReadonlyArray<string>, refused: ReadonlySet<string> = new Set()): ChannelView => {
  const delivered = new Map<string, number>()
  const others: Array<string> = []
  for (const text of texts) {
    const found = text.startsWith("ack ") ? markers(text) : []
    if (found.length === 0) others.push(text)
    for (const m of found) delivered.set(m, (delivered.get(m) ?? 0) + 1)
  }
  return { name, sent, refused, delivered, others }
}

/** What each channel's user ended up with. */
export const channelViews = (peers: Peers, sent: Sent) =>
  Effect.gen(function*() {
    const telegramTexts: Array<string> = []
    for (const user of telegramUsers) telegramTexts.push(...(yield* peers.telegram.chat(user.id)).map((m) => m.text))
    const posted = yield* peers.slack.posted
    const slackTexts = posted.filter((p) => slackUsers.some((u) => p.channel === `D${u}`)).map((p) => p.text)
    const http = yield* peers.http.state
    const httpDelivered = new Map<string, number>(http.live)
    for (const m of http.recovered) if (!httpDelivered.has(m)) httpDelivered.set(m, 1)
    // Refused: an error answer to the POST, no answer at all, or an `error` event for its turn (the turn failed).
    const told = (o: PostOutcome) => o._tag !== "Accepted" || http.errors.has(o.turnId)
    const refused = new Set([...http.outcomes].filter(([, o]) => told(o)).map(([m]) => m))
    const httpTexts = [...http.outcomes.values()].flatMap((o) =>
      o._tag === "Refused" ? [`${o.status} ${o.error}`] : o._tag === "Accepted" && http.errors.has(o.turnId) ? [http.errors.get(o.turnId) ?? ""] : []
    )
    return [
      replyView("telegram", sent.tg, telegramTexts),
      replyView("slack", sent.sl, slackTexts),
      { name: "http", sent: sent.ht, refused, delivered: httpDelivered, others: httpTexts }
    ] satisfies ReadonlyArray<ChannelView>
  })
