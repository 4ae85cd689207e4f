import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect, Layer } from "effect"
import * as NodePath from "node:path"
import sharp from "sharp"
import { agentRuntimeLayer } from "../../src/cli/agentLayer.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import { openActiveSession } from "../../src/runtime/activeSession.js"
import type { Attachment } from "../../src/session/messages.js"
import { MessageQueue } from "../../src/turn/MessageQueue.js"
import { TurnRunner } from "../../src/turn/TurnRunner.js"
import { makePdf } from "../support/pdfFiles.js"
import { makeTempDir, writeFiles } from "../support/tempDir.js"

// What the media tests share: an agent on the fake model server speaking one of the three APIs, a turn of a message
// with files, and files to send.

/** The three APIs, each with a model the known-models table says sees. */
export const apis = {
  anthropic: { provider: "anthropic", model: "claude-sonnet-4-5" },
  responses: { provider: "openai", model: "gpt-4.1" },
  chat: { provider: "openrouter", model: "openai/gpt-4o" }
} as const

/** An agent folder on `baseURL` with `config` over the defaults that keep a test quiet. */
export const agentDir = (baseURL: string, config: object, files: Record<string, string> = {}) => {
  const dir = NodePath.join(makeTempDir(), "agent")
  writeFiles(dir, {
    ".kern/config.json": JSON.stringify({ baseURL, heartbeatInterval: 0, autoCommit: false, recall: false, ...config }),
    ...files
  })
  return dir
}

export const runtime = (dir: string) =>
  agentRuntimeLayer(dir, { command: "kern test", waitSeconds: 0 }).pipe(
    Layer.provide(Layer.succeed(ProcessEnv, {
      OPENAI_API_KEY: "sk-test",
      ANTHROPIC_API_KEY: "sk-ant-test",
      OPENROUTER_API_KEY: "sk-or-test"
    })),
    Layer.provide(NodeContext.layer)
  )

/** One operator turn of a message with files, run as the runtime runs it from its queue. */
export const turnWith = (text: string, attachments: ReadonlyArray<Attachment> = []) =>
  Effect.scoped(Effect.gen(function*() {
    const queue = yield* MessageQueue
    const runner = yield* TurnRunner
    const { session } = yield* openActiveSession()
    yield* queue.offer({ interface: "cli", channel: "terminal", userId: "operator", text, attachments })
    const message = yield* queue.next
    const outcome = yield* runner.run({ message, session, emit: () => Effect.void })
    yield* queue.endTurn("main")
    return outcome
  }))

/** A photo-sized JPEG (one colour: small bytes, real pixels). */
export const photo = (width: number, height: number, background = "#3a7") =>
  Effect.promise(() => sharp({ create: { width, height, channels: 3, background } }).jpeg().toBuffer()).pipe(
    Effect.map((buffer) => new Uint8Array(buffer))
  )

/** A PNG with transparency. */
export const transparentPng = (width: number, height: number) =>
  Effect.promise(() =>
    sharp({ create: { width, height, channels: 4, background: { r: 200, g: 10, b: 10, alpha: 0.5 } } }).png().toBuffer()
  ).pipe(Effect.map((buffer) => new Uint8Array(buffer)))

/** A one-page PDF with a text layer (test/support/pdfFiles.ts). */
export const onePagePdf = (): Uint8Array => makePdf(["Total due 42"])

/** The pixel size of an image's bytes. */
export const sizeOf = (bytes: Uint8Array) =>
  Effect.promise(() => sharp(bytes).metadata()).pipe(Effect.map((meta) => ({ width: meta.width, height: meta.height, format: meta.format })))
