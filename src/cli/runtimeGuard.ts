import { Console, Effect, Option } from "effect"
import { ContractBaselineStore } from "../kernel/ContractBaselineStore.js"
import { ToolRegistry } from "../kernel/ToolRegistry.js"
import { kernelAgentLayer } from "./agentLayer.js"
import { CommandFailed } from "./errors.js"
import { table } from "./table.js"

export interface GuardArgs {
  readonly dir: string
  readonly json: boolean
  readonly surface: string
}

const short = (fingerprint: string | null) => (fingerprint === null ? "-" : fingerprint.slice(0, 19))

/** The live registry against the approved baseline, tool by tool. */
export const tools = (args: GuardArgs) =>
  Effect.gen(function*() {
    const registry = yield* ToolRegistry
    const store = yield* ContractBaselineStore
    const registered = yield* registry.listTools
    const approved = new Map((yield* store.list(args.surface)).map((baseline) => [baseline.toolId, baseline]))
    const rows = registered.map(({ fingerprint, spec }) => {
      const baseline = approved.get(spec.toolId)
      return {
        toolId: spec.toolId,
        safetyClass: spec.safetyClass,
        fingerprint,
        approvedFingerprint: baseline?.fingerprint ?? null,
        status: baseline === undefined ? "new" : baseline.fingerprint === fingerprint ? "approved" : "changed",
        approvedBy: baseline?.approvedBy ?? null
      }
    })
    if (args.json) return yield* Console.log(JSON.stringify({ surface: args.surface, tools: rows }))
    yield* Console.log(table(
      ["tool", "safety", "status", "fingerprint", "approved by"],
      rows.map((row) => [row.toolId, row.safetyClass, row.status, short(row.fingerprint), row.approvedBy ?? "-"])
    ))
  }).pipe(Effect.provide(kernelAgentLayer(args.dir)))

export const snapshot = (args: GuardArgs & { readonly approvedBy: string }) =>
  Effect.gen(function*() {
    const registry = yield* ToolRegistry
    const store = yield* ContractBaselineStore
    const baselines = yield* store.snapshot(args.surface, yield* registry.listAll, args.approvedBy)
    if (args.json) return yield* Console.log(JSON.stringify({ surface: args.surface, approved: baselines }))
    yield* Console.log(`approved ${baselines.length} contracts on surface "${args.surface}" as ${args.approvedBy}`)
  }).pipe(Effect.provide(kernelAgentLayer(args.dir)))

/** What `kern init` did about the contract baseline of a folder under enforce. */
export interface FirstSnapshot {
  readonly surface: string
  /** "approved": this was the first baseline; "kept": one existed and was left for the operator to review. */
  readonly baseline: "approved" | "kept"
  readonly contracts: number
}

/**
 * The first baseline of an agent folder under enforce, so a fresh agent's write tools work: every built-in
 * contract, approved by `approvedBy`. An existing baseline is never replaced here (a re-init must not approve
 * drift behind the operator's back); `kern runtime-guard snapshot` does that deliberately.
 */
export const firstSnapshot = (dir: string, surface: string, approvedBy: string) =>
  Effect.gen(function*() {
    const registry = yield* ToolRegistry
    const store = yield* ContractBaselineStore
    const existing = yield* store.list(surface)
    if (existing.length > 0) return { surface, baseline: "kept", contracts: existing.length } satisfies FirstSnapshot
    const approved = yield* store.snapshot(surface, yield* registry.listAll, approvedBy)
    return { surface, baseline: "approved", contracts: approved.length } satisfies FirstSnapshot
  }).pipe(Effect.provide(kernelAgentLayer(dir)))

export const mismatches = (args: GuardArgs) =>
  Effect.gen(function*() {
    const registry = yield* ToolRegistry
    const store = yield* ContractBaselineStore
    const found = yield* store.mismatches(args.surface, yield* registry.listAll)
    if (args.json) return yield* Console.log(JSON.stringify({ surface: args.surface, mismatches: found }))
    if (found.length === 0) return yield* Console.log(`no mismatches on surface "${args.surface}"`)
    yield* Console.log(table(
      ["tool", "kind", "safety", "approved", "current", "what changed"],
      found.map((m) => [
        m.toolId,
        m.kind,
        m.safetyClass,
        short(m.approvedFingerprint),
        short(m.currentFingerprint),
        m.changed === undefined || m.changed.length === 0 ? "-" : m.changed.join(", ")
      ])
    ))
  }).pipe(Effect.provide(kernelAgentLayer(args.dir)))

export const approveContract = (args: GuardArgs & { readonly toolId: string; readonly approvedBy: string }) =>
  Effect.gen(function*() {
    const registry = yield* ToolRegistry
    const store = yield* ContractBaselineStore
    const found = yield* registry.get(args.toolId)
    if (Option.isNone(found)) {
      return yield* new CommandFailed({
        message: `no tool "${args.toolId}" is registered; \`kern runtime-guard tools\` lists them`
      })
    }
    const baseline = yield* store.approve(args.surface, found.value.spec, args.approvedBy)
    if (args.json) return yield* Console.log(JSON.stringify(baseline))
    yield* Console.log(`approved ${args.toolId} on surface "${args.surface}" (${short(baseline.fingerprint)}) as ${args.approvedBy}`)
  }).pipe(Effect.provide(kernelAgentLayer(args.dir)))
