import { it } from "@effect/vitest"

/**
 * The parallel test files share their worker's modules (`isolate: false`), and with them @effect/vitest's one `it`
 * object. Its `layer(...)` does not make an `it` of its own: it assigns the layer's testers onto that shared object, so
 * every `it.effect` and `it.scoped` of every later file in the worker ran in the first layer's runtime, with its
 * TestClock (tests read another file's time, woke another file's sleepers and hung to their timeout). Run before each
 * file: once made read-only, the methods `layer(...)` replaces refuse the replacement, naming what to do instead.
 */
const replacedByLayer = ["effect", "scoped", "prop", "flakyTest", "layer"] as const

for (const name of replacedByLayer) {
  if (Object.getOwnPropertyDescriptor(it, name)?.set !== undefined) continue
  const method: unknown = it[name]
  Object.defineProperty(it, name, {
    enumerable: true,
    configurable: false,
    get: () => method,
    set: () => {
      throw new Error(
        `@effect/vitest's layer() would replace it.${name} for every later test file of this worker (isolate: false): ` +
          "provide the layer to each test instead (Effect.provide(layer))"
      )
    }
  })
}
