import { FileSystem, Path } from "@effect/platform"
import { Effect, Option, Schema } from "effect"
import type { RunOrigin } from "./ApprovalGate.js"

/**
 * Calls that grant a privilege the model must not grant itself: who may talk to the agent (kern_pair), what it is
 * told to be (a write or edit of AGENTS.md, IDENTITY.md or USERS.md at the folder's root) and to whom it speaks (a
 * message to anyone but the person the turn serves). Under `approvalMode: "ask"` the policy sends them to a person
 * as it does a DESTRUCTIVE call. They are classified here, by their effect, so no tool has to remember the rule.
 */
export const identityFiles: ReadonlyArray<string> = ["AGENTS.md", "IDENTITY.md", "USERS.md"]

export interface PrivilegedCall {
  readonly toolId: string
  readonly args: unknown
  /** The turn's channel and person; absent outside a turn, where the local operator is served. */
  readonly origin?: RunOrigin | undefined
}

/** Why a call needs a person, or none; an Effect only when a path must be resolved, undefined for other tools. */
export type PrivilegedCheck = (call: PrivilegedCall) => Effect.Effect<Option.Option<string>> | undefined

const PathArgs = Schema.Struct({ path: Schema.String })
const RecipientArgs = Schema.Struct({ interface: Schema.String, userId: Schema.String })
const decodePath = Schema.decodeUnknownOption(PathArgs)
const decodeRecipient = Schema.decodeUnknownOption(RecipientArgs)

const maxSymlinkHops = 40

const recipientReason = (call: PrivilegedCall): Option.Option<string> =>
  Option.flatMap(decodeRecipient(call.args), (to) => {
    const served = call.origin
    if (served !== undefined && served.interface === to.interface && served.userId === to.userId) return Option.none()
    const who = served === undefined ? "the local operator" : `${served.interface}:${served.userId}`
    return Option.some(`message sends to ${to.interface}:${to.userId}, not to the person this turn serves (${who})`)
  })

/** The check for the agent folder at `root` (without one, the identity files are not recognised). */
export const make = (root: string | undefined) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path

    // The real path of one that may not exist yet: the nearest existing parent resolved, dangling symlinks followed.
    const realOf = (absolute: string, hops: number): Effect.Effect<string> =>
      hops > maxSymlinkHops
        ? Effect.succeed(absolute)
        : fs.realPath(absolute).pipe(
          Effect.orElse(() =>
            fs.readLink(absolute).pipe(
              Effect.matchEffect({
                onSuccess: (target) => realOf(path.resolve(path.dirname(absolute), target), hops + 1),
                onFailure: () => {
                  const parent = path.dirname(absolute)
                  return parent === absolute
                    ? Effect.succeed(absolute)
                    : Effect.map(realOf(parent, hops), (real) => path.join(real, path.basename(absolute)))
                }
              })
            )
          )
        )

    const lexicalRoot = root === undefined ? undefined : path.resolve(root)
    const realRoot = lexicalRoot === undefined ? undefined : yield* realOf(lexicalRoot, 0)

    /** Where the identity files are, as named and as reached: lower-cased, as a case-insensitive disk opens them. */
    const guarded = (rootDir: string) =>
      Effect.gen(function*() {
        const named = identityFiles.flatMap((name) => [path.join(rootDir, name), path.join(realRoot ?? rootDir, name)])
        const reached = yield* Effect.forEach(named, (file) => realOf(file, 0))
        return new Map([...named, ...reached].map((file) => [file.toLowerCase(), path.basename(file)]))
      })

    const identityReason = (toolId: string, requested: string, rootDir: string) =>
      Effect.gen(function*() {
        const files = yield* guarded(rootDir)
        const absolute = path.resolve(realRoot ?? rootDir, requested)
        const real = yield* realOf(absolute, 0)
        const hit = [absolute, real].map((file) => files.get(file.toLowerCase())).find((name) => name !== undefined)
        return hit === undefined
          ? Option.none<string>()
          : Option.some(`${toolId} changes ${hit}, part of what the agent is told to be`)
      })

    const check: PrivilegedCheck = (call) => {
      switch (call.toolId) {
        case "kern_pair":
          return Effect.succeed(Option.some("kern_pair changes who may talk to the agent"))
        case "message":
          return Effect.succeed(recipientReason(call))
        case "write":
        case "edit": {
          const requested = decodePath(call.args)
          if (lexicalRoot === undefined || Option.isNone(requested)) return undefined
          return identityReason(call.toolId, requested.value.path, lexicalRoot)
        }
        default:
          return undefined
      }
    }
    return check
  })
