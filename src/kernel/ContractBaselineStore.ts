import { changeCounter } from "../storage/changeCounter.js"
import { databaseFile } from "../storage/databaseFile.js"
import { transaction } from "../storage/transaction.js"
import { SqlClient } from "@effect/sql"
import { Clock, Context, Effect, Layer, Option, Schema } from "effect"
import type { ToolSpec } from "./contracts.js"
import { contractChanges, contractFingerprint, contractText } from "./fingerprint.js"

/** An operator-approved contract fingerprint, per surface (e.g. "kernel") and tool. */
export class ContractBaseline extends Schema.Class<ContractBaseline>("ContractBaseline")({
  surface: Schema.String,
  toolId: Schema.String,
  fingerprint: Schema.String,
  safetyClass: Schema.String,
  sideEffectLevel: Schema.String,
  approvedBy: Schema.String,
  approvedAtMs: Schema.Number
}) {}

/** "none": no baseline was ever taken for the surface, so there is nothing to compare against. */
export type BaselineStatus = "approved" | "changed" | "new" | "none"

export interface ContractMismatch {
  readonly toolId: string
  readonly kind: "changed" | "new" | "missing"
  readonly approvedFingerprint: string | null
  readonly currentFingerprint: string | null
  readonly safetyClass: string
  /** For a changed contract, what changed ("description", "input schema"), when the baseline kept the contract. */
  readonly changed?: ReadonlyArray<string>
}

export class BaselineError extends Schema.TaggedError<BaselineError>()("BaselineError", {
  message: Schema.String
}) {}

export class ContractBaselineStore extends Context.Tag("kern/kernel/ContractBaselineStore")<ContractBaselineStore, {
  /** Whether an approved baseline exists to compare against (the executor skips the check when not). */
  readonly configured: boolean
  readonly list: (surface: string) => Effect.Effect<ReadonlyArray<ContractBaseline>, BaselineError>
  /** Approves every given tool's current contract and forgets tools no longer present. */
  readonly snapshot: (
    surface: string,
    specs: ReadonlyArray<ToolSpec>,
    approvedBy: string
  ) => Effect.Effect<ReadonlyArray<ContractBaseline>, BaselineError>
  readonly approve: (surface: string, spec: ToolSpec, approvedBy: string) => Effect.Effect<ContractBaseline, BaselineError>
  readonly mismatches: (
    surface: string,
    specs: ReadonlyArray<ToolSpec>
  ) => Effect.Effect<ReadonlyArray<ContractMismatch>, BaselineError>
  readonly check: (surface: string, spec: ToolSpec, fingerprint: string) => Effect.Effect<BaselineStatus, BaselineError>
  /**
   * `check`'s answer when it is known without a query (the surface's fingerprints are cached and kern.db has not
   * changed since they were read), at once; undefined when `check` must run. Asked on every tool call, it spares the
   * call an Effect (and, under observe, a fiber) for what is a map lookup.
   */
  readonly checkNow?: (surface: string, spec: ToolSpec, fingerprint: string) => BaselineStatus | undefined
  /** What differs between the approved contract of `spec`'s tool and `spec` ("description", "input schema"). */
  readonly changes: (surface: string, spec: ToolSpec) => Effect.Effect<ReadonlyArray<string>, BaselineError>
}>() {}

const decodeRows = Schema.decodeUnknown(Schema.Array(ContractBaseline))
const decodeFingerprints = Schema.decodeUnknown(Schema.Array(Schema.Struct({ toolId: Schema.String, fingerprint: Schema.String })))

/** A surface's approved fingerprints by tool, as kern.db held them at `version` of its change counter. */
interface Approved {
  readonly version: number
  readonly fingerprints: ReadonlyMap<string, string>
}

/** What `check` answers from a surface's approved fingerprints. */
const statusOf = (fingerprints: ReadonlyMap<string, string>, toolId: string, fingerprint: string): BaselineStatus => {
  if (fingerprints.size === 0) return "none"
  const approved = fingerprints.get(toolId)
  return approved === undefined ? "new" : approved === fingerprint ? "approved" : "changed"
}

/**
 * Baselines in kern.db; they outlive the process, which is their point. `check`, asked on every tool call, answers
 * from the surface's fingerprints read once and kept while kern.db's change counter stands still: any commit, an
 * approval by `kern runtime-guard` in another process as much as one here, makes the next check read them again.
 * Without a kern.db file (in memory, or on PostgreSQL, where no counter sees other processes' commits) every check
 * reads them.
 */
export const layerSql: Layer.Layer<ContractBaselineStore, never, SqlClient.SqlClient> = Layer.scoped(
  ContractBaselineStore,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const fail = (error: { readonly message: string }) => new BaselineError({ message: error.message })
    const file = yield* databaseFile(sql)
    const counter = Option.isSome(file) ? yield* changeCounter(file.value) : Option.none<() => number>()
    // The surfaces' fingerprints as last read: read and replaced synchronously on a call's path (checkNow).
    let approved: ReadonlyMap<string, Approved> = new Map()

    const list = (surface: string) =>
      sql`SELECT * FROM contract_baselines WHERE surface = ${surface} ORDER BY tool_id`.pipe(
        Effect.flatMap(decodeRows),
        Effect.mapError(fail)
      )

    const row = (surface: string, spec: ToolSpec, approvedBy: string, approvedAtMs: number) =>
      new ContractBaseline({
        surface,
        toolId: spec.toolId,
        fingerprint: contractFingerprint(spec),
        safetyClass: spec.safetyClass,
        sideEffectLevel: spec.sideEffectLevel,
        approvedBy,
        approvedAtMs
      })

    const upsert = (baseline: ContractBaseline, spec: ToolSpec) =>
      sql`INSERT INTO contract_baselines ${sql.insert({ ...baseline, contract: contractText(spec) })}
        ON CONFLICT (surface, tool_id) DO UPDATE SET fingerprint = excluded.fingerprint, contract = excluded.contract,
          safety_class = excluded.safety_class, side_effect_level = excluded.side_effect_level,
          approved_by = excluded.approved_by, approved_at_ms = excluded.approved_at_ms`

    const approve = (surface: string, spec: ToolSpec, approvedBy: string) =>
      Effect.gen(function*() {
        const baseline = row(surface, spec, approvedBy, yield* Clock.currentTimeMillis)
        yield* upsert(baseline, spec)
        return baseline
      }).pipe(Effect.mapError(fail), Effect.withSpan("kern.kernel.baseline.approve"))

    const snapshot = (surface: string, specs: ReadonlyArray<ToolSpec>, approvedBy: string) =>
      transaction(sql)(
        Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          yield* sql`DELETE FROM contract_baselines WHERE surface = ${surface}`
          const rows = specs.map((spec) => row(surface, spec, approvedBy, now))
          for (const [index, baseline] of rows.entries()) yield* upsert(baseline, specs[index]!)
          return rows
        })
      ).pipe(Effect.mapError(fail), Effect.withSpan("kern.kernel.baseline.snapshot"))

    const contracts = (surface: string) =>
      sql<{ toolId: string; contract: string | null }>`SELECT tool_id, contract FROM contract_baselines
        WHERE surface = ${surface}`.pipe(
        Effect.map((rows) => new Map(rows.map((row) => [row.toolId, row.contract]))),
        Effect.mapError(fail)
      )

    const changes = (surface: string, spec: ToolSpec) =>
      sql<{ contract: string | null }>`SELECT contract FROM contract_baselines
        WHERE surface = ${surface} AND tool_id = ${spec.toolId}`.pipe(
        Effect.map((rows) => contractChanges(rows[0]?.contract ?? null, spec)),
        Effect.mapError(fail)
      )

    const mismatches = (surface: string, specs: ReadonlyArray<ToolSpec>) =>
      Effect.map(Effect.zip(list(surface), contracts(surface)), ([approved, approvedContracts]) => {
        const byId = new Map(approved.map((baseline) => [baseline.toolId, baseline]))
        const live = new Set(specs.map((spec) => spec.toolId))
        const found: Array<ContractMismatch> = []
        for (const spec of specs) {
          const current = contractFingerprint(spec)
          const baseline = byId.get(spec.toolId)
          if (baseline === undefined) {
            found.push({ toolId: spec.toolId, kind: "new", approvedFingerprint: null, currentFingerprint: current, safetyClass: spec.safetyClass })
          } else if (baseline.fingerprint !== current) {
            found.push({
              toolId: spec.toolId,
              kind: "changed",
              approvedFingerprint: baseline.fingerprint,
              currentFingerprint: current,
              safetyClass: spec.safetyClass,
              changed: contractChanges(approvedContracts.get(spec.toolId) ?? null, spec)
            })
          }
        }
        for (const baseline of approved) {
          if (!live.has(baseline.toolId)) {
            found.push({
              toolId: baseline.toolId,
              kind: "missing",
              approvedFingerprint: baseline.fingerprint,
              currentFingerprint: null,
              safetyClass: baseline.safetyClass
            })
          }
        }
        return found.sort((a, b) => (a.toolId < b.toolId ? -1 : 1))
      })

    const fingerprintsOf = (surface: string) =>
      sql`SELECT tool_id, fingerprint FROM contract_baselines WHERE surface = ${surface}`.pipe(
        Effect.flatMap(decodeFingerprints),
        Effect.map((rows): ReadonlyMap<string, string> => new Map(rows.map((row) => [row.toolId, row.fingerprint]))),
        Effect.mapError(fail)
      )

    const check = (surface: string, spec: ToolSpec, fingerprint: string) => {
      if (Option.isNone(counter)) return Effect.map(fingerprintsOf(surface), (fingerprints) => statusOf(fingerprints, spec.toolId, fingerprint))
      const read = counter.value
      return Effect.suspend(() => {
        const version = read()
        const kept = approved.get(surface)
        if (kept !== undefined && kept.version === version) return Effect.succeed(statusOf(kept.fingerprints, spec.toolId, fingerprint))
        // The counter is read before the rows: a commit while they are read moves it, and the next check reads again.
        return fingerprintsOf(surface).pipe(
          Effect.tap((fingerprints) => Effect.sync(() => {
            approved = new Map(approved).set(surface, { version, fingerprints })
          })),
          Effect.map((fingerprints) => statusOf(fingerprints, spec.toolId, fingerprint))
        )
      })
    }

    const checkNow = (surface: string, spec: ToolSpec, fingerprint: string): BaselineStatus | undefined => {
      if (Option.isNone(counter)) return undefined
      const kept = approved.get(surface)
      return kept !== undefined && kept.version === counter.value() ? statusOf(kept.fingerprints, spec.toolId, fingerprint) : undefined
    }

    return { configured: true, list, snapshot, approve, mismatches, check, checkNow, changes }
  })
)

/** No baseline store: the executor compares against registration fingerprints only. */
export const layerNone: Layer.Layer<ContractBaselineStore> = Layer.succeed(ContractBaselineStore, {
  configured: false,
  list: () => Effect.succeed([]),
  snapshot: () => Effect.fail(new BaselineError({ message: "no baseline store is configured" })),
  approve: () => Effect.fail(new BaselineError({ message: "no baseline store is configured" })),
  mismatches: () => Effect.succeed([]),
  check: () => Effect.succeed("none"),
  changes: () => Effect.succeed([])
})
