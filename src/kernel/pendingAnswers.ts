import { Clock, Deferred, Duration, Effect, Option, Ref } from "effect"

/**
 * Who answers something a turn waits for (an approval, a question): the local operator (terminal, web UI, the CLI:
 * they hold the folder or its token) or a chat channel's user.
 */
export type Answerer =
  | { readonly _tag: "LocalOperator"; readonly via: string }
  | { readonly _tag: "ChannelUser"; readonly interface: string; readonly userId: string }

export const localOperator = (via: string): Answerer => ({ _tag: "LocalOperator", via })
export const channelUser = (iface: string, userId: string): Answerer => ({ _tag: "ChannelUser", interface: iface, userId })

/** How a wait ended without an answer: its time ran out, or the turn waiting ended (stopped, kern shutting down). */
export type Unanswered = "timeout" | "interrupted"

export interface PendingAnswers<P, R> {
  /** Opens a wait and returns it; then `wait` for its answer. */
  readonly open: (id: string, pending: P) => Effect.Effect<Deferred.Deferred<R>>
  /** Settles a wait once: the first answer wins, later ones find it gone (none). */
  readonly settle: (id: string, make: (pending: P, atMs: number) => R) => Effect.Effect<Option.Option<R>>
  /**
   * Waits for the answer, or `timeout`; a wait that times out or whose fiber is interrupted settles with `unanswered`
   * (unless an answer raced in), so nothing is left pending and whoever shows it learns it ended.
   */
  readonly wait: (
    id: string,
    answer: Deferred.Deferred<R>,
    timeout: Duration.Duration,
    unanswered: (how: Unanswered, pending: P, atMs: number) => R
  ) => Effect.Effect<R>
  readonly find: (id: string) => Effect.Effect<Option.Option<P>>
  readonly pending: Effect.Effect<ReadonlyArray<P>>
}

interface Entry<P, R> {
  readonly pending: P
  readonly answer: Deferred.Deferred<R>
}

/**
 * The one mechanism behind everything a turn waits on a person for (Approvals, Questions): a map of open waits in a
 * Ref, each settled exactly once, by an answer, its timeout or the end of its turn. `settled` runs once per settled
 * wait, before the waiter resumes (audit, publish).
 */
export const makePendingAnswers = <P, R>(settled: (pending: P, resolution: R) => Effect.Effect<void>) =>
  Effect.gen(function*() {
    const waiting = yield* Ref.make(new Map<string, Entry<P, R>>())

    const open = (id: string, pending: P) =>
      Effect.tap(Deferred.make<R>(), (answer) => Ref.update(waiting, (all) => new Map(all).set(id, { pending, answer })))

    const settle = (id: string, make: (pending: P, atMs: number) => R) =>
      Effect.gen(function*() {
        const entry = yield* Ref.modify(waiting, (all) => {
          const found = all.get(id)
          if (found === undefined) return [undefined, all] as const
          const next = new Map(all)
          next.delete(id)
          return [found, next] as const
        })
        if (entry === undefined) return Option.none<R>()
        const resolution = make(entry.pending, yield* Clock.currentTimeMillis)
        yield* settled(entry.pending, resolution)
        yield* Deferred.succeed(entry.answer, resolution)
        return Option.some(resolution)
      })

    const wait: PendingAnswers<P, R>["wait"] = (id, answer, timeout, unanswered) =>
      Deferred.await(answer).pipe(
        Effect.timeoutTo({ duration: timeout, onSuccess: Option.some, onTimeout: () => Option.none<R>() }),
        Effect.flatMap((answered) =>
          Option.isSome(answered)
            ? Effect.succeed(answered.value)
            // Timed out: settle it (unless an answer raced in), then take whatever settled it.
            : Effect.zipRight(settle(id, (pending, atMs) => unanswered("timeout", pending, atMs)), Deferred.await(answer))
        ),
        Effect.onInterrupt(() => settle(id, (pending, atMs) => unanswered("interrupted", pending, atMs)))
      )

    const find = (id: string) => Effect.map(Ref.get(waiting), (all) => Option.map(Option.fromNullable(all.get(id)), (e) => e.pending))
    const pending = Effect.map(Ref.get(waiting), (all) => [...all.values()].map((entry) => entry.pending))

    return { open, settle, wait, find, pending } satisfies PendingAnswers<P, R>
  })
