import { FileSystem } from "@effect/platform"
import { Effect, Option } from "effect"
import { parseDotenv } from "../config/dotenv.js"
import { keptToken } from "../channels/web/serverSetup.js"
import { type HostFiles, hostFiles } from "../storage/hostFiles.js"
import * as LockFile from "../storage/LockFile.js"

/** The host's own files in `.kern-host/` of its home (src/storage/hostFiles.ts: clients find the host by them). */
export { type HostFiles, hostFiles }

/** The variables of the host's `.env` (none when it is absent or unreadable). */
export const readHostEnv = (files: HostFiles) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    if (!(yield* fs.exists(files.envFile).pipe(Effect.orElseSucceed(() => false)))) return {}
    const text = yield* fs.readFileString(files.envFile).pipe(Effect.orElseSucceed(() => ""))
    return parseDotenv(text).values
  })

/** KERN_HOST_TOKEN of the host's `.env`, when there is one. */
export const readHostToken = (files: HostFiles) =>
  Effect.map(readHostEnv(files), (values) => Option.fromNullable(values["KERN_HOST_TOKEN"]).pipe(Option.filter((t) => t.trim() !== "")))

/** The host's token, made on its first start. */
export const hostToken = (files: HostFiles) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    yield* fs.makeDirectory(files.dir, { recursive: true, mode: 0o700 }).pipe(Effect.orElse(() => Effect.void))
    const current = yield* readHostToken(files)
    return yield* keptToken(files.envFile, Option.getOrUndefined(current), "KERN_HOST_TOKEN", "kern serve's token for GET /agents and GET /host.")
  })

/** The running host of a home, by its lock: its pid and address. */
export const runningHost = (files: HostFiles) => LockFile.readHolder(files.lockFile)
