import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as NodeTerminal from "@effect/platform-node/NodeTerminal"
import { Console, Effect, Exit, Layer } from "effect"
import { Console as NodeConsole } from "node:console"
import { Writable } from "node:stream"
import { kernProgram } from "../../src/cli/program.js"
import { ProcessEnv } from "../../src/config/ProcessEnv.js"
import type { CliResult } from "./cli.js"

/** A Writable that keeps what is written to it. */
const collector = () => {
  const chunks: Array<string> = []
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      chunks.push(typeof chunk === "string" ? chunk : chunk.toString("utf8"))
      done()
    }
  })
  return { stream, text: () => chunks.join("") }
}

/** effect's Console over a node Console whose stdout and stderr are `out` and `err`. */
const capturingConsole = (unsafe: globalThis.Console): Console.Console => {
  const sync = (f: () => void) => Effect.sync(f)
  return {
    [Console.TypeId]: Console.TypeId,
    assert: (condition, ...args) => sync(() => unsafe.assert(condition, ...args)),
    clear: sync(() => unsafe.clear()),
    count: (label) => sync(() => unsafe.count(label)),
    countReset: (label) => sync(() => unsafe.countReset(label)),
    debug: (...args) => sync(() => unsafe.debug(...args)),
    dir: (item, options) => sync(() => unsafe.dir(item, options)),
    dirxml: (...args) => sync(() => unsafe.dirxml(...args)),
    error: (...args) => sync(() => unsafe.error(...args)),
    group: (options) => sync(() => options?.collapsed === true ? unsafe.groupCollapsed(options.label) : unsafe.group(options?.label)),
    groupEnd: sync(() => unsafe.groupEnd()),
    info: (...args) => sync(() => unsafe.info(...args)),
    log: (...args) => sync(() => unsafe.log(...args)),
    table: (data, properties) => sync(() => unsafe.table(data, properties)),
    time: (label) => sync(() => unsafe.time(label)),
    timeEnd: (label) => sync(() => unsafe.timeEnd(label)),
    timeLog: (label, ...args) => sync(() => unsafe.timeLog(label, ...args)),
    trace: (...args) => sync(() => unsafe.trace(...args)),
    warn: (...args) => sync(() => unsafe.warn(...args)),
    unsafe
  }
}

/**
 * Runs a `kern` command line in this process, through the same program `src/main.ts` runs, with its Console captured
 * and an environment of our choosing. For tests of what a command does; a test whose subject is the process (exit by
 * signal, locks held by another process, the daemon, what reaches the real stdout) runs the binary (`runKern`).
 */
export const runKernIn = async (
  args: ReadonlyArray<string>,
  options: { readonly env?: Record<string, string>; readonly color?: boolean } = {}
): Promise<CliResult> => {
  const out = collector()
  const err = collector()
  const console = capturingConsole(new NodeConsole({ stdout: out.stream, stderr: err.stream, colorMode: false }))
  const exit = await Effect.runPromiseExit(
    kernProgram(args, { color: options.color ?? false }).pipe(
      Console.withConsole(console),
      Effect.provideService(ProcessEnv, { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "/tmp", ...options.env }),
      Effect.provide(Layer.mergeAll(NodeFileSystem.layer, NodePath.layer, NodeTerminal.layer))
    )
  )
  // The process's teardown: the program's number, else 1 for a defect (what `exitCodeTeardown` does).
  const status = Exit.isSuccess(exit) ? exit.value : 1
  if (Exit.isFailure(exit)) err.stream.write(`${String(exit.cause)}\n`)
  return { status, stdout: out.text(), stderr: err.text() }
}
