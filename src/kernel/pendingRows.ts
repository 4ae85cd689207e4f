import { type Bound, columns, type EventFields, pushValuesAt } from "./eventRows.js"

/**
 * The lines of an event log's own journal that are not yet in kern.db, kept as the values they were written from: the
 * log's move into kern.db binds them (eventRows.ts `insertValues`) instead of reading the file back and extracting each
 * column from its JSON. They are a copy of what the journal holds, never the only one: the journal is written first,
 * and whenever the copy does not start where kern.db's offset for the journal stands (another process moved some of
 * the journal, the copy was given up), the move reads the file as before.
 */
export interface PendingRows {
  /** The values of a line just appended whole to the journal (eventRows.ts `valuesAt`), ending at byte `end`. */
  readonly add: (
    event: Omit<EventFields, "tsMs">,
    tsMs: number,
    errorMessage: string | null | undefined,
    detail: string | null | undefined,
    end: number
  ) => void
  /**
   * The rows of the lines from byte `committed` on, and the byte after the last, when the copy holds them all from
   * there; they are handed over (the copy then starts at that byte). Undefined when it does not.
   */
  readonly takeFrom: (committed: number) => Held | undefined
  /** Every line of the journal up to `size`, its end, is in kern.db: the copy starts again, empty, from there. */
  readonly caughtUp: (size: number) => void
}

/** Rows handed over: their values one after the other, `columns.length` a row. */
export interface Held {
  readonly values: ReadonlyArray<Bound>
  readonly rows: number
  /** The byte after the last row's line. */
  readonly end: number
}

/**
 * A copy of at most `max` lines (then it is given up until kern.db catches up with the journal: a kern.db refusing
 * batches for long must not grow memory), starting at byte `from` of the journal.
 */
export const makePendingRows = (max: number, from = 0): PendingRows => {
  // The kept rows' values in one array, not an array a row: what is kept until the next move survives a young
  // collection or two, and fewer objects make that cheaper.
  let values: Array<Bound> = []
  // The byte each kept row's line ends at.
  let ends: Array<number> = []
  // Where the first kept row's line starts; undefined while the copy is given up.
  let start: number | undefined = from
  const restart = (at: number | undefined): undefined => {
    values = []
    ends = []
    start = at
    return undefined
  }
  return {
    add: (event, tsMs, errorMessage, detail, end) => {
      if (start === undefined) return
      if (ends.length >= max) {
        restart(undefined)
        return
      }
      pushValuesAt(values, event, tsMs, errorMessage, detail)
      ends.push(end)
    },
    takeFrom: (committed) => {
      if (start === undefined) return undefined
      // Lines another process moved into kern.db (it reads a running writer's journal too) are dropped from the copy.
      let first = 0
      let at = start
      while (first < ends.length && at < committed) at = ends[first++]!
      // kern.db's offset is not where one of the copy's lines starts (behind it, or past it): the file is read.
      if (at !== committed) return restart(undefined)
      if (first === ends.length) return restart(at)
      const rows = ends.length - first
      const held = { values: first === 0 ? values : values.slice(first * columns.length), rows, end: ends[ends.length - 1]! }
      restart(held.end)
      return held
    },
    caughtUp: (size) => restart(size)
  }
}
