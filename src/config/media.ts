import { Schema } from "effect"

const PositiveInt = Schema.Int.pipe(Schema.positive()).annotations({ identifier: "a positive integer" })

export const mediaDefaults = { maxFileBytes: 20 * 1024 * 1024, maxTurnBytes: 50 * 1024 * 1024 } as const

/**
 * `media`: the caps on files that come with messages (photos, PDFs, voice notes, any file). A file over
 * `maxFileBytes`, or files of one message over `maxTurnBytes` together, are refused with a reply saying so.
 */
export const MediaConfig = Schema.Struct({
  maxFileBytes: Schema.optionalWith(PositiveInt, { default: () => mediaDefaults.maxFileBytes }),
  maxTurnBytes: Schema.optionalWith(PositiveInt, { default: () => mediaDefaults.maxTurnBytes })
})
export type MediaConfig = typeof MediaConfig.Type

export const mediaExpectation = "an object { maxFileBytes?, maxTurnBytes? } of positive integers (bytes one file may " +
  "have, default 20971520; bytes the files of one message may have together, default 52428800)"
