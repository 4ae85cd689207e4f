import { Context, Effect, Either, Layer, Option, ParseResult, Schema, type Scope, Tracer } from "effect"
import { atOrBelow, type SafetyClass, ToolSpec, type ToolSpecInput } from "./contracts.js"
import { contractFingerprint } from "./fingerprint.js"
import type { RunContext } from "./RunContext.js"
import { argsFromJsonSchema, argsJsonSchema, parametersFromArgs } from "./toolArgs.js"
import type { ToolFailure } from "./ToolFailure.js"

/** What a handler may ask for at call time: the run's context and a scope closed when the call ends. */
export type CallServices = RunContext | Scope.Scope

export type ToolHandler<A> = (args: A) => Effect.Effect<unknown, ToolFailure, CallServices>

/** A tool as the executor sees it: its spec, the fingerprint seen at registration, how to decode and run it. */
export interface RegisteredTool {
  readonly spec: ToolSpec
  /** The fingerprint of `spec` as it is now. */
  readonly fingerprint: string
  /** The fingerprint seen when the tool was registered. */
  readonly registeredFingerprint: string
  readonly parameters: Schema.Schema<unknown, unknown>
  /** Runs with `services` plus the call's CallServices (the executor provides both). */
  readonly handler: ToolHandler<unknown>
  /** The services captured at registration: whatever the handler needs beyond CallServices. */
  readonly services: Context.Context<never>
  /** A longer kernel timeout for calls that ask for one (bash's own `timeout` argument). */
  readonly timeoutFor?: ((args: unknown) => number | undefined) | undefined
  /** How long a call that names no timeout of its own runs (bash's 120000), where it is not `spec.timeoutMs`. */
  readonly defaultTimeoutMs?: number | undefined
  /** The handler keeps to its timeout itself and needs no service (ToolRegistration.selfTimed). */
  readonly selfTimed?: boolean | undefined
}

/** How long a call of `tool` runs by default: the one figure listings show. */
export const defaultCallTimeoutMs = (tool: RegisteredTool): number => tool.defaultTimeoutMs ?? tool.spec.timeoutMs

export interface ToolRegistration<A, I, R> {
  /** The arguments as an Effect Schema; derived from `argsSchema` when absent. */
  readonly parameters?: Schema.Schema<A, I, never>
  readonly handler: (args: A) => Effect.Effect<unknown, ToolFailure, R>
  readonly timeoutFor?: (args: A) => number | undefined
  readonly defaultTimeoutMs?: number
  /**
   * The handler keeps to the call's timeout (the longer of `spec.timeoutMs` and `timeoutFor`) by itself, ends its work
   * when it is interrupted, and holds nothing a Scope must release: an MCP request, which carries its own timeout and
   * is cancelled on the server when interrupted. Such a tool's untraced, unretried call runs its handler in the
   * caller's fiber, with no fiber, Scope or timer of the kernel's. Only for a handler that needs no service.
   */
  readonly selfTimed?: [R] extends [never] ? boolean : never
}

/** A spec that cannot be registered: names the tool and the field. */
export class RegistrationError extends Schema.TaggedError<RegistrationError>()("RegistrationError", {
  toolId: Schema.String,
  field: Schema.String,
  message: Schema.String
}) {}

const decodeSpec = Schema.decodeUnknownEither(ToolSpec)

const specError = (input: ToolSpecInput, error: ParseResult.ParseError): RegistrationError => {
  const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
  const field = issue?.path.map(String).join(".") || "(spec)"
  return new RegistrationError({
    toolId: String(input.toolId),
    field,
    message: `tool "${String(input.toolId)}": invalid ${field}: ${issue?.message ?? "invalid value"}`
  })
}

/**
 * Decodes a spec; when only an Effect Schema describes the arguments, the declarations are derived from it, and the
 * arguments' full JSON Schema always is (from the Schema, or from the declarations), so the fingerprint covers it.
 */
export const makeSpec = (
  input: ToolSpecInput,
  parameters?: Schema.Schema.AnyNoContext
): Either.Either<ToolSpec, RegistrationError> =>
  decodeSpec(input).pipe(
    Either.mapLeft((error) => specError(input, error)),
    Either.map((spec) => {
      const fromParameters = parameters === undefined ? undefined : argsJsonSchema(parameters)
      const argsSchema = fromParameters !== undefined && spec.argsSchema.length === 0
        ? argsFromJsonSchema(fromParameters)
        : spec.argsSchema
      return new ToolSpec({
        ...spec,
        argsSchema,
        argsJsonSchema: spec.argsJsonSchema ?? fromParameters ?? argsJsonSchema(parametersFromArgs(argsSchema))
      })
    })
  )

export class ToolRegistry extends Context.Tag("kern/kernel/ToolRegistry")<ToolRegistry, {
  /** Registers a tool; its handler's services are captured now, so calls need only CallServices. */
  readonly register: <A, I, R>(
    spec: ToolSpecInput,
    registration: ToolRegistration<A, I, R>
  ) => Effect.Effect<RegisteredTool, RegistrationError, Exclude<R, CallServices>>
  /** The seed's shorthand: arguments declared field by field in `argsSchema`. */
  readonly registerFn: <R>(
    spec: ToolSpecInput,
    fn: (args: Record<string, unknown>) => Effect.Effect<unknown, ToolFailure, R>
  ) => Effect.Effect<RegisteredTool, RegistrationError, Exclude<R, CallServices>>
  /**
   * Replaces a live tool's spec (a tool that changed at runtime). The registration fingerprint is kept, so the
   * executor sees the change as a contract mismatch.
   */
  readonly replaceSpec: (spec: ToolSpecInput) => Effect.Effect<RegisteredTool, RegistrationError>
  /** Removes a tool (one an MCP server no longer offers); whether it was registered. */
  readonly unregister: (toolId: string) => Effect.Effect<boolean>
  readonly get: (toolId: string) => Effect.Effect<Option.Option<RegisteredTool>>
  /** The tool registered under `toolId` now, read synchronously (the executor's hot path). */
  readonly lookup: (toolId: string) => RegisteredTool | undefined
  readonly listAll: Effect.Effect<ReadonlyArray<ToolSpec>>
  readonly listTools: Effect.Effect<ReadonlyArray<RegisteredTool>>
  readonly listIds: Effect.Effect<ReadonlyArray<string>>
  /** Tools at or below a safety class. */
  readonly filterBySafety: (ceiling: SafetyClass) => Effect.Effect<ReadonlyArray<ToolSpec>>
  /** Tools an agent may use: its name is allowlisted, or the allowlist is empty (all agents). */
  readonly filterForAgent: (agentName: string) => Effect.Effect<ReadonlyArray<ToolSpec>>
  readonly size: Effect.Effect<number>
  readonly has: (toolId: string) => Effect.Effect<boolean>
}>() {}

const sorted = (tools: ReadonlyMap<string, RegisteredTool>): ReadonlyArray<RegisteredTool> =>
  [...tools.values()].sort((a, b) => (a.spec.toolId < b.spec.toolId ? -1 : a.spec.toolId > b.spec.toolId ? 1 : 0))

export const makeRegistry = Effect.sync(() => {
  // This registry's tools. Every change is one synchronous step, so a reader never sees half of one.
  const tools = new Map<string, RegisteredTool>()
  const current = Effect.sync((): ReadonlyMap<string, RegisteredTool> => tools)

  const add = (tool: RegisteredTool): Effect.Effect<RegisteredTool, RegistrationError> =>
    Effect.suspend(() => {
      if (tools.has(tool.spec.toolId)) {
        return Effect.fail(
          new RegistrationError({
            toolId: tool.spec.toolId,
            field: "toolId",
            message: `tool "${tool.spec.toolId}" is already registered`
          })
        )
      }
      tools.set(tool.spec.toolId, tool)
      return Effect.succeed(tool)
    })

  const register = <A, I, R>(
    input: ToolSpecInput,
    registration: ToolRegistration<A, I, R>
  ): Effect.Effect<RegisteredTool, RegistrationError, Exclude<R, CallServices>> =>
    Effect.gen(function*() {
      const spec = yield* makeSpec(input, registration.parameters)
      const parameters = (registration.parameters ?? parametersFromArgs(spec.argsSchema)) as Schema.Schema<
        unknown,
        unknown
      >
      // The span registration runs in is not the handler's: a call's spans belong under the caller's span.
      const captured = Context.omit(Tracer.ParentSpan)(yield* Effect.context<Exclude<R, CallServices>>())
      const handler = registration.handler as (args: unknown) => Effect.Effect<unknown, ToolFailure, R>
      const timeoutFor = registration.timeoutFor as ((args: unknown) => number | undefined) | undefined
      const fingerprint = contractFingerprint(spec)
      return yield* add({
        spec,
        fingerprint,
        registeredFingerprint: fingerprint,
        parameters,
        handler: handler as ToolHandler<unknown>,
        services: captured as Context.Context<never>,
        timeoutFor,
        defaultTimeoutMs: registration.defaultTimeoutMs,
        selfTimed: registration.selfTimed === true
      })
    }).pipe(Effect.withSpan("kern.kernel.registry.register", { attributes: { toolId: String(input.toolId) } }))

  const registerFn = <R>(
    input: ToolSpecInput,
    fn: (args: Record<string, unknown>) => Effect.Effect<unknown, ToolFailure, R>
  ) => register<Record<string, unknown>, Record<string, unknown>, R>(input, { handler: fn })

  return ToolRegistry.of({
    register,
    registerFn,
    replaceSpec: (input) =>
      Effect.gen(function*() {
        const existing = tools.get(String(input.toolId))
        if (existing === undefined) {
          return yield* new RegistrationError({
            toolId: String(input.toolId),
            field: "toolId",
            message: `tool "${String(input.toolId)}" is not registered`
          })
        }
        const spec = yield* makeSpec(input)
        const updated: RegisteredTool = { ...existing, spec, fingerprint: contractFingerprint(spec) }
        yield* Effect.sync(() => tools.set(spec.toolId, updated))
        return updated
      }),
    unregister: (toolId) => Effect.sync(() => tools.delete(toolId)),
    get: (toolId) => Effect.map(current, (map) => Option.fromNullable(map.get(toolId))),
    lookup: (toolId) => tools.get(toolId),
    listAll: Effect.map(current, (map) => sorted(map).map((tool) => tool.spec)),
    listTools: Effect.map(current, sorted),
    listIds: Effect.map(current, (map) => sorted(map).map((tool) => tool.spec.toolId)),
    filterBySafety: (ceiling) =>
      Effect.map(
        current,
        (map) => sorted(map).map((tool) => tool.spec).filter((spec) => atOrBelow(spec.safetyClass, ceiling))
      ),
    filterForAgent: (agentName) =>
      Effect.map(current, (map) =>
        sorted(map)
          .map((tool) => tool.spec)
          .filter((spec) => spec.allowlistedAgents.length === 0 || spec.allowlistedAgents.includes(agentName))),
    size: Effect.map(current, (map) => map.size),
    has: (toolId) => Effect.map(current, (map) => map.has(toolId))
  })
})

export const layer = Layer.effect(ToolRegistry, makeRegistry)
