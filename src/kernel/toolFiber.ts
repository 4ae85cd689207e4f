import {
  Cause,
  Clock,
  Context,
  Duration,
  Effect,
  Exit,
  Fiber,
  FiberId,
  Option,
  Ref,
  Runtime,
  RuntimeFlags,
  Scope,
  Tracer
} from "effect"

export interface ToolFiberOptions<R, E2, I = never, S = never> {
  /** The services the work sees. Its Scope and its span (or, untraced, the caller's span) are added. */
  readonly context: Context.Context<Exclude<R, Scope.Scope | I>>
  /** One service more than `context` holds (the call's RunContext): added to the one copy made of it. */
  readonly service?: { readonly tag: Context.Tag<I, S>; readonly value: S } | undefined
  readonly timeout: Duration.DurationInput
  /** The failure reported when the work is cut off by the timeout. */
  readonly onTimeout: () => E2
  /** A span around the work; the spans the work makes are its children. */
  readonly span?: {
    readonly name: string
    readonly attributes: Record<string, unknown>
    /** The span's parent, when not the caller's current span. */
    readonly parent?: Tracer.AnySpan | undefined
  } | undefined
}

/** How the work ended, and the span it ran in when it was traced. */
export interface ToolFiberExit<A, E> {
  readonly exit: Exit.Exit<A, E>
  readonly span: Tracer.Span | undefined
}

const endSpan = (span: Tracer.Span, exit: Exit.Exit<unknown, unknown>) =>
  Effect.clockWith((clock) => Effect.sync(() => span.end(clock.unsafeCurrentTimeNanos(), exit)))

/**
 * Runs one tool call in a fiber of its own, with a Scope closed when it ends (processes, files and sockets are
 * released even on timeout or interrupt), an optional span, and a timeout on the Clock. Returns the work's Exit;
 * a timeout is the failure `onTimeout` makes, reported after the work's finalizers ran. The span, when traced,
 * comes back too (its id identifies the call in the trace).
 *
 * The fiber is started on the spot, from the caller's fiber refs (Clock, logger, tracer, scheduler) with the given
 * services as its context. Most tool calls finish before they first yield: those need no timer, no scheduler
 * turn, and no change to the caller's context. Work that suspends is awaited against a timer fiber. An interrupt
 * of the caller interrupts the work and waits for it.
 */
export const runToolFiber = <A, E, R, E2, I = never, S = never>(
  work: Effect.Effect<A, E, R>,
  options: ToolFiberOptions<R, E2, I, S>
): Effect.Effect<ToolFiberExit<A, E | E2>> =>
  Effect.uninterruptibleMask((restore) =>
    Effect.flatMap(Scope.make(), (scope) =>
      options.span === undefined
        ? inFiber(restore, work, options, scope, undefined)
        : Effect.flatMap(
          Effect.makeSpan(options.span.name, {
            attributes: options.span.attributes,
            captureStackTrace: false,
            ...(options.span.parent === undefined ? {} : { parent: options.span.parent })
          }),
          (span) => inFiber(restore, work, options, scope, span)
        ))
  )

/** runToolFiber once its Scope (and its span, when traced) is made. */
const inFiber = <A, E, R, E2, I, S>(
  restore: <X, Y, Z>(effect: Effect.Effect<X, Y, Z>) => Effect.Effect<X, Y, Z>,
  work: Effect.Effect<A, E, R>,
  options: ToolFiberOptions<R, E2, I, S>,
  scope: Scope.CloseableScope,
  span: Tracer.Span | undefined
) =>
  Effect.withFiberRuntime<ToolFiberExit<A, E | E2>>((caller, status) => {
    // One copy of the services, with the Scope, the span and the added service: everything `work` requires.
    const services = new Map<string, unknown>(options.context.unsafeMap)
    services.set(Scope.Scope.key, scope)
    if (options.service !== undefined) services.set(options.service.tag.key, options.service.value)
    // Untraced work's spans hang under the caller's span, whatever span the given services were made in.
    const parent = span ?? Context.getOption(caller.currentContext, Tracer.ParentSpan).pipe(Option.getOrUndefined)
    if (parent === undefined) services.delete(Tracer.ParentSpan.key)
    else services.set(Tracer.ParentSpan.key, parent)
    const context = Context.unsafeMake<R>(services)
    const runtime = Runtime.make({
      context,
      runtimeFlags: RuntimeFlags.enable(status.runtimeFlags, RuntimeFlags.Interruption),
      fiberRefs: caller.getFiberRefs()
    })
    const worker = Runtime.runFork(runtime)(work)
    const settle = (exit: Exit.Exit<A, E | E2>) => {
      const ended: ToolFiberExit<A, E | E2> = { exit, span }
      return span === undefined
        ? Effect.as(Scope.close(scope, exit), ended)
        : Effect.as(Effect.zipRight(Scope.close(scope, exit), endSpan(span, exit)), ended)
    }
    const early = worker.unsafePoll()
    if (early !== null) return settle(early)
    // An interrupt of the caller settles too (the worker interrupted and waited for first): the Scope closes
    // and the span ends whichever way the wait ends.
    const interrupted = Effect.suspend(() => settle(Exit.failCause(Cause.interrupt(caller.id()))))
    const clock = Context.get(caller.currentDefaultServices, Clock.Clock)
    return Effect.flatMap(awaitWithin(restore, worker, clock, options.timeout, options.onTimeout, interrupted), settle)
  })

/** Effect's own clock: what a fiber has unless a test installed another (TestClock). Its sleep is a plain timer. */
const liveClock = Effect.runSync(Effect.clock)

/** The longest a Node timer waits; a longer timeout is none, as Effect's own clock treats it. */
const maxTimerMillis = 2 ** 31 - 1

/**
 * Waits for a running worker, interrupting it when `duration` passes on the Clock first. On the live clock that is
 * one timer and an observer on the worker, with no fiber of its own (a timer fiber per call cost about as much as
 * the rest of an MCP call); on another clock (TestClock) a timer fiber sleeps on it. The timer is torn down without
 * waiting for it.
 */
const awaitWithin = <A, E, E2>(
  restore: <X, Y, Z>(effect: Effect.Effect<X, Y, Z>) => Effect.Effect<X, Y, Z>,
  worker: Fiber.RuntimeFiber<A, E>,
  /** The caller's Clock (its fiber's, read without an Effect step). */
  clock: Clock.Clock,
  duration: Duration.DurationInput,
  onTimeout: () => E2,
  /** Runs, uninterruptibly, after the worker was interrupted and waited for, when the caller is interrupted. */
  interrupted: Effect.Effect<unknown>
): Effect.Effect<Exit.Exit<A, E | E2>> => {
  if (clock !== liveClock) {
    return awaitWithinFiber(restore, worker, duration, onTimeout).pipe(Effect.onInterrupt(() => interrupted))
  }
  const millis = Duration.toMillis(duration)
  return restore(Effect.async<Exit.Exit<A, E | E2>>((resume) => {
    let fired = false
    const timer = millis > maxTimerMillis ? undefined : setTimeout(() => {
      fired = true
      worker.unsafeInterruptAsFork(FiberId.none)
    }, millis)
    worker.addObserver((exit) => {
      if (timer !== undefined) clearTimeout(timer)
      resume(Effect.succeed(fired && Exit.isInterrupted(exit) ? Exit.fail(onTimeout()) : exit))
    })
    // The caller interrupted: the timer goes, and the worker is interrupted and waited for (an async's canceler
    // runs uninterruptibly), then `interrupted`: no interrupt handler wraps every wait for this rare end.
    return Effect.zipRight(
      Effect.zipRight(Effect.sync(() => timer !== undefined && clearTimeout(timer)), Fiber.interrupt(worker)),
      interrupted
    )
  }))
}

/** awaitWithin on a clock that is not the live one: a timer fiber sleeps on it. */
const awaitWithinFiber = <A, E, E2>(
  restore: <X, Y, Z>(effect: Effect.Effect<X, Y, Z>) => Effect.Effect<X, Y, Z>,
  worker: Fiber.RuntimeFiber<A, E>,
  duration: Duration.DurationInput,
  onTimeout: () => E2
): Effect.Effect<Exit.Exit<A, E | E2>> =>
  Effect.gen(function*() {
    const fired = yield* Ref.make(false)
    // Forked from the uninterruptible region, the timer must be made interruptible itself, or cancelling it would
    // wait for the whole duration.
    const timer = yield* Effect.fork(
      Effect.interruptible(
        Effect.zipRight(Effect.sleep(duration), Effect.zipRight(Ref.set(fired, true), Fiber.interrupt(worker)))
      )
    )
    const exit = yield* restore(Fiber.await(worker)).pipe(
      Effect.onInterrupt(() => Effect.zipRight(Fiber.interruptFork(timer), Fiber.interrupt(worker)))
    )
    if (Exit.isInterrupted(exit) && (yield* Ref.get(fired))) return Exit.fail(onTimeout())
    yield* Effect.fiberIdWith((id) => Effect.sync(() => timer.unsafeInterruptAsFork(id)))
    return exit
  })
