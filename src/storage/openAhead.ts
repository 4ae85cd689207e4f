/**
 * Opens a scan's files in a helper thread, ahead of the scan, which then finds each file's descriptor ready. Only
 * the open moves: the scan still checks each descriptor (fstat), reads it and closes it, as it would have after its
 * own open (agentFiles.ts). The open through a held folder (`/proc/<pid>/fd/N/name`) is the dearest step of a
 * file's read, about half of it, and the helper runs it on the machine's other core meanwhile.
 *
 * The scan gives the paths in the order it will take them, a bounded window ahead. Each path has a slot in shared
 * memory that the helper or the scan claims first. The scan never waits for the helper: a path the helper has not
 * reached is opened by the scan itself, and one whose open the helper has begun (a helper the system has paused)
 * is abandoned to it: the scan opens the file itself and the helper closes what it opened. The scan waits for the
 * helper only before it closes a folder that an abandoned open still goes through (`settled`), and when it stops.
 *
 * Descriptors belong to the process, not the thread: the helper is started with `trackUnmanagedFds: false`, or its
 * exit would close the descriptors it opened, whose numbers may by then name other files.
 */
import * as NodeFs from "node:fs"
import * as NodeWorker from "node:worker_threads"

/** Not opened: the path was not to be opened ahead ("") or the open failed. A descriptor is ≥ 0. */
export const notOpened = -1
/** A slot not yet claimed. */
const waiting = -2
/** Claimed by the helper, its open under way. */
const opening = -3
/** Claimed by the scan: the helper leaves it alone. */
const claimed = -4
/** The helper's open abandoned by the scan: the helper closes what it opens and marks the slot `closed`. */
const abandoned = -5
const closed = -6

// Plain JavaScript: it runs alike from the bundle and from tsx. A stop message comes after every path message, when
// the scan has claimed every slot: the helper then has no open under way.
const helperSource = [
  "const { parentPort, workerData } = require('node:worker_threads');",
  "const { openSync, closeSync } = require('node:fs');",
  "const slots = new Int32Array(workerData.slots);",
  "const flags = workerData.flags;",
  "parentPort.on('message', (message) => {",
  "  if (message === 'stop') return parentPort.close();",
  "  const { start, paths } = message;",
  "  for (let k = 0; k < paths.length; k++) {",
  "    const slot = start + k;",
  `    if (paths[k] === '' || Atomics.compareExchange(slots, slot, ${waiting}, ${opening}) !== ${waiting}) continue;`,
  `    let fd = ${notOpened};`,
  "    try { fd = openSync(paths[k], flags); } catch {}",
  `    if (Atomics.compareExchange(slots, slot, ${opening}, fd) !== ${opening}) {`,
  "      try { if (fd >= 0) closeSync(fd); } catch {}",
  `      Atomics.store(slots, slot, ${closed});`,
  "    }",
  "    Atomics.notify(slots, slot);",
  "  }",
  "});"
].join("\n")

export interface OpenAhead {
  /** Queues the next paths, in the order they will be taken; "" for one the scan opens its own way. */
  readonly add: (paths: ReadonlyArray<string>) => void
  /** How many paths were added. */
  readonly added: () => number
  /** The descriptor of the `index`th path added (taken once each, in order): opened ahead, else opened now. */
  readonly take: (index: number) => number
  /**
   * Whether no open of a path up to `index` (all taken) is under way: the folders they go through may be closed.
   * With `wait`, waits until it is so.
   */
  readonly settled: (index: number, wait: boolean) => boolean
  /** No further open; closes every descriptor opened and not taken. Then the paths' folders may be closed. */
  readonly stop: () => void
}

/**
 * A helper for `capacity` paths opened with `flags`; undefined when no helper thread can be started (the scan then
 * opens every file itself).
 */
export const makeOpenAhead = (capacity: number, flags: number): OpenAhead | undefined => {
  const slots = new Int32Array(new SharedArrayBuffer(capacity * 4))
  slots.fill(waiting)
  let helper: NodeWorker.Worker
  try {
    helper = new NodeWorker.Worker(helperSource, { eval: true, workerData: { slots: slots.buffer, flags }, trackUnmanagedFds: false })
  } catch {
    return undefined
  }
  // The helper never holds the process open: it ends with the scan (stop), or with the process. A helper that failed
  // leaves its slots to the scan.
  helper.unref()
  helper.on("error", () => undefined)
  const paths: Array<string> = []
  let taken = 0
  /** Slots whose helper open was abandoned and may not have ended, in ascending order. */
  const inFlight: Array<number> = []
  let stopped = false
  const openNow = (path: string) => {
    if (path === "") return notOpened
    try {
      return NodeFs.openSync(path, flags)
    } catch {
      return notOpened
    }
  }
  // Bounded: a helper that ended (it cannot fail but by a fault of node's) or hangs in one open (a hung file system,
  // which the scan's own open would hang on too) does not hold the scan.
  const waitWhile = (slot: number, state: number) => {
    Atomics.wait(slots, slot, state, 5000)
  }
  const settled = (index: number, wait: boolean) => {
    while (inFlight.length > 0 && inFlight[0]! <= index) {
      const slot = inFlight[0]!
      if (Atomics.load(slots, slot) === abandoned) {
        if (!wait) return false
        waitWhile(slot, abandoned)
      }
      inFlight.shift()
    }
    return true
  }
  return {
    add: (next) => {
      if (next.length === 0 || stopped) return
      const start = paths.length
      if (start + next.length > capacity) throw new RangeError("openAhead: more paths than its capacity")
      for (let k = 0; k < next.length; k++) if (next[k] === "") slots[start + k] = notOpened
      paths.push(...next)
      helper.postMessage({ start, paths: next })
    },
    added: () => paths.length,
    take: (index) => {
      if (index !== taken || index >= paths.length || stopped) throw new RangeError(`openAhead: path ${index} taken out of order`)
      taken++
      const found = Atomics.compareExchange(slots, index, waiting, claimed)
      if (found === waiting) return openNow(paths[index]!)
      if (found === opening) {
        if (Atomics.compareExchange(slots, index, opening, abandoned) === opening) {
          inFlight.push(index)
          return openNow(paths[index]!)
        }
        return Atomics.load(slots, index)
      }
      return found
    },
    settled,
    stop: () => {
      if (stopped) return
      stopped = true
      for (let index = taken; index < paths.length; index++) {
        if (Atomics.compareExchange(slots, index, waiting, claimed) !== opening) continue
        waitWhile(index, opening)
      }
      for (let index = taken; index < paths.length; index++) {
        const fd = Atomics.load(slots, index)
        if (fd >= 0) NodeFs.closeSync(fd)
      }
      settled(paths.length, true)
      taken = paths.length
      helper.postMessage("stop")
    }
  }
}
