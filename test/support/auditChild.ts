// A process that makes kernel tool calls over a real kern.db and is then killed: `node --import tsx
// test/support/auditChild.ts <kern.db> [secret]`. It opens the kernel (executor, SQL event log with its journal,
// baselines) and prints `ready`; each line `call <session>` on stdin runs one call of `audit.echo` in a run of that session
// and prints `called <session>` once the call has returned; then it waits to be killed. With a secret, the known secret
// AUDIT_SECRET has that value.
import { Effect, Layer, Schema } from "effect"
import * as NodeReadline from "node:readline"
import * as KnownSecrets from "../../src/config/KnownSecrets.js"
import * as ApprovalGate from "../../src/kernel/ApprovalGate.js"
import * as ContractBaselineStore from "../../src/kernel/ContractBaselineStore.js"
import * as EventLog from "../../src/kernel/EventLog.js"
import { makeRunContext } from "../../src/kernel/RunContext.js"
import { ToolFailure } from "../../src/kernel/ToolFailure.js"
import * as ToolExecutor from "../../src/kernel/ToolExecutor.js"
import * as ToolPolicy from "../../src/kernel/ToolPolicy.js"
import * as ToolRegistry from "../../src/kernel/ToolRegistry.js"
import * as Database from "../../src/storage/Database.js"

const [file, secret] = process.argv.slice(2)
if (file === undefined) throw new Error("usage: auditChild.ts <kern.db> [secret]")

const db = Database.layer({ filename: file })
const kernel = ToolExecutor.layer.pipe(
  Layer.provideMerge(Layer.mergeAll(
    ToolRegistry.layer,
    ToolPolicy.normal(),
    ApprovalGate.denyAll(),
    EventLog.layerSql,
    ContractBaselineStore.layerSql,
    ToolExecutor.settings("observe")
  )),
  Layer.provideMerge(Layer.merge(db, KnownSecrets.layerFrom(secret === undefined ? {} : { AUDIT_SECRET: secret })))
)

const main = Effect.gen(function*() {
  const registry = yield* ToolRegistry.ToolRegistry
  const executor = yield* ToolExecutor.ToolExecutor
  // It fails with its text: the audit record keeps a failure's message (redacted), not a result.
  yield* registry.register({ toolId: "audit.echo", name: "Echo" }, {
    parameters: Schema.Struct({ text: Schema.String }),
    handler: ({ text }) => Effect.fail(new ToolFailure({ code: "UNEXPECTED", message: `echo: ${text}`, retryable: false }))
  })
  const lines = NodeReadline.createInterface({ input: process.stdin })
  const next = () => Effect.async<string | undefined>((resume) => {
    const onLine = (line: string) => {
      lines.off("close", onClose)
      resume(Effect.succeed(line))
    }
    const onClose = () => {
      lines.off("line", onLine)
      resume(Effect.succeed(undefined))
    }
    lines.once("line", onLine)
    lines.once("close", onClose)
  })
  process.stdout.write("ready\n")
  for (let line = yield* next(); line !== undefined; line = yield* next()) {
    const sessionId = line.replace(/^call /, "").trim()
    const ctx = yield* makeRunContext({ sessionId })
    yield* executor.executeIn(ctx, "audit.echo", { text: `hello ${secret ?? ""}` })
    process.stdout.write(`called ${sessionId}\n`)
  }
  return yield* Effect.never
})

Effect.runFork(Effect.scoped(main).pipe(Effect.provide(kernel)))
