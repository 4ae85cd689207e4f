import { Effect } from "effect"
import type { ContractEnforcement } from "../config/schema.js"
import type { BaselineStatus, ContractBaselineStore } from "./ContractBaselineStore.js"
import type { RegisteredTool } from "./ToolRegistry.js"

/** What the executor found about a tool's contract before running it; `deny` when enforce refuses the call. */
export interface ContractCheck {
  readonly fingerprint: string
  readonly status: string
  readonly mismatch: boolean
  readonly deny?: string
}

/**
 * The risk tag of a contract a third party writes (an MCP server's tool): its description and schema are what the
 * model reads, so a server that rewords a read-only tool can still steer the model. Enforce protects it whatever its
 * safety class.
 */
export const thirdPartyContractTag = "contract:third-party"

/** Local writes, network, destructive, external-write and third-party contracts: the ones enforce protects. */
const enforced = (tool: RegisteredTool) =>
  tool.spec.safetyClass !== "READ_ONLY" || tool.spec.sideEffectLevel === "external_write" ||
  tool.spec.riskTags.includes(thirdPartyContractTag)

/** ` (description, input schema)`: what changed, when the baseline kept the approved contract. */
const changedFields = (changes: ReadonlyArray<string>) => (changes.length === 0 ? "" : ` (${changes.join(", ")})`)

/**
 * The contract check per `contractEnforcement`: `off` only reports the fingerprint; `observe` compares with the
 * registration fingerprint and, once a baseline exists for the surface, the approved one; `enforce` also denies a
 * high-risk or third-party tool that drifted, is new (every tool is, before the first snapshot), or whose baseline could not be
 * checked. Without a baseline to consult the
 * answer is known at once and comes back as a plain value; the executor runs the Effect only when there is one.
 */
export const makeContractCheck = (
  contractEnforcement: ContractEnforcement,
  surface: string,
  baselines: ContractBaselineStore["Type"]
) =>
(tool: RegisteredTool): ContractCheck | Effect.Effect<ContractCheck> => {
  const fingerprint = tool.fingerprint
  if (contractEnforcement === "off") return { fingerprint, status: "unchecked", mismatch: false }
  const mismatch = fingerprint !== tool.registeredFingerprint
  const enforce = contractEnforcement === "enforce" && enforced(tool)
  const toolId = tool.spec.toolId
  const local: ContractCheck = mismatch
    ? {
      fingerprint,
      status: "changed_since_registration",
      mismatch,
      ...(enforce ? { deny: `the contract of ${toolId} changed since it was registered` } : {})
    }
    : { fingerprint, status: "match", mismatch }
  // A contract that drifted since registration is reported as such; the baseline only speaks to the rest.
  if (!baselines.configured || mismatch) return local
  const judged = (status: BaselineStatus, changes: ReadonlyArray<string>): ContractCheck => {
    if (status === "approved" || (status === "none" && !enforce)) return local
    // With no baseline at all every contract is new (seed 002): enforce denies until an operator takes one.
    const deny = status === "none"
      ? `no contract baseline has been approved on surface "${surface}" yet, so the contract of ${toolId} is not ` +
        `approved; take one with \`kern runtime-guard snapshot${surface === "kernel" ? "" : ` --surface ${surface}`}\``
      : `the contract of ${toolId} is ${
        status === "new" ? "new and not approved yet" : `changed from the approved baseline${changedFields(changes)}`
      }; approve it with \`kern runtime-guard approve-contract ${surface} ${toolId}\``
    return {
      fingerprint,
      status: `baseline_${status === "none" ? "new" : status}`,
      mismatch: true,
      ...(enforce ? { deny } : {})
    }
  }
  // The cached answer, when the store has one: no Effect on the call's path. A change enforce denies reads what changed.
  const known = baselines.checkNow?.(surface, tool.spec, fingerprint)
  if (known !== undefined && !(known === "changed" && enforce)) return judged(known, [])
  return baselines.check(surface, tool.spec, fingerprint).pipe(
    Effect.flatMap((status) =>
      status === "changed" && enforce
        ? Effect.map(baselines.changes(surface, tool.spec), (changes) => judged(status, changes))
        : Effect.succeed(judged(status, []))
    ),
    Effect.catchAll((error) =>
      Effect.succeed<ContractCheck>({
        fingerprint,
        status: "baseline_error",
        mismatch: true,
        ...(enforce ? { deny: `the contract baseline check failed: ${error.message}` } : {})
      })
    )
  )
}
