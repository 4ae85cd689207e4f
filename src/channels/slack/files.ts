import { Effect } from "effect"
import type { MediaStoreShape } from "../../media/MediaStore.js"
import type { Attachment } from "../../session/messages.js"
import type { OutgoingFile } from "../../tools/Channels.js"
import type { SlackApi, SlackApiError } from "./SlackApi.js"
import type { Target } from "./target.js"
import { Completed, FilesInfo, type SlackFile, UploadUrl } from "./wire.js"
import { sizeText } from "../../media/sizeText.js"

/** The files of a message could not all be taken: `text` is said to the sender, and the event is done. */
export interface FilesRefused {
  readonly _tag: "FilesRefused"
  readonly text: string
}

/** A failure that may pass (network, 5xx, a cut download): the event is left unacknowledged, Slack delivers it again. */
export interface FilesFailed {
  readonly _tag: "FilesFailed"
  readonly message: string
}

const refusal = (text: string): FilesRefused => ({ _tag: "FilesRefused", text })
const failed = (message: string): FilesFailed => ({ _tag: "FilesFailed", message })
const nameOf = (file: SlackFile) => file.name ?? file.title ?? file.id

/** Slack errors that will not pass by asking again. */
const final = (error: SlackApiError) => !(error.error === "network" || error.error === "ratelimited" || /^http_5/.test(error.error))

/** The file as files.info tells it when the event carried only part of it. */
const complete = (api: SlackApi, file: SlackFile) =>
  file.url_private_download !== undefined && file.file_access !== "check_file_info"
    ? Effect.succeed(file)
    : api.call("files.info", { file: file.id }, FilesInfo).pipe(
      Effect.map((info) => info.file),
      Effect.mapError((error) =>
        final(error) ? refusal(`${nameOf(file)} could not be fetched from Slack (${error.error})`) : failed(error.message))
    )

const fetchOne = (api: SlackApi, media: MediaStoreShape, shared: SlackFile) =>
  Effect.gen(function*() {
    const cap = media.limits.maxFileBytes
    const file = yield* complete(api, shared)
    const name = nameOf(file)
    if (file.mode === "external" || file.mode === "tombstone" || file.mode === "hidden_by_limit") {
      return yield* Effect.fail(refusal(`${name} is not a file kern can download from Slack (${file.mode})`))
    }
    if (file.size !== undefined && file.size > cap) {
      return yield* Effect.fail(refusal(`${name} is ${sizeText(file.size)}; files over ${sizeText(cap)} are not taken (config media.maxFileBytes)`))
    }
    if (file.url_private_download === undefined) return yield* Effect.fail(refusal(`${name} has no download link on Slack`))
    const downloaded = yield* api.download(file.url_private_download, cap).pipe(
      Effect.mapError((error) =>
        error.reason === "too-large"
          ? refusal(`${name} is over ${sizeText(cap)}; files over that are not taken (config media.maxFileBytes)`)
          : error.reason === "not-the-file"
          ? refusal(`${name} could not be downloaded: ${error.message}`)
          : error.status === 429
          ? refusal(`${name} was not taken: Slack is limiting downloads right now; send it again in a few minutes`)
          : error.reason === "status" && error.status !== undefined && error.status < 500
          ? refusal(`${name} could not be downloaded from Slack (HTTP ${error.status})`)
          : failed(`${name}: ${error.message}`)
      )
    )
    // Slack answers a download it does not authorize with its sign-in page: HTML where the file is not HTML.
    if (/text\/html/i.test(downloaded.contentType) && !/html/i.test(file.mimetype ?? "")) {
      return yield* Effect.fail(
        refusal(`${name} could not be downloaded: Slack answered with a web page (does the app have the files:read scope?)`)
      )
    }
    if (file.size !== undefined && downloaded.bytes.length !== file.size) {
      return yield* Effect.fail(failed(`${name} came as ${downloaded.bytes.length} bytes, not the ${file.size} Slack announced`))
    }
    return yield* media.ingest({ name, bytes: downloaded.bytes }).pipe(Effect.mapError((rejected) => refusal(rejected.message)))
  })

/** A message's shared files, in the media store; refused as a whole when one cannot be taken. */
export const fetchFiles = (
  api: SlackApi,
  media: MediaStoreShape,
  files: ReadonlyArray<SlackFile>
): Effect.Effect<ReadonlyArray<Attachment>, FilesRefused | FilesFailed> =>
  Effect.gen(function*() {
    const known = files.flatMap((file) => file.size === undefined ? [] : [{ bytes: file.size }])
    yield* media.checkTotal(known).pipe(Effect.mapError((error) => refusal(error.message)))
    const attachments = yield* Effect.forEach(files, (file) => fetchOne(api, media, file))
    yield* media.checkTotal(attachments).pipe(Effect.mapError((error) => refusal(error.message)))
    return attachments
  }).pipe(Effect.withSpan("kern.slack.files", { attributes: { files: files.length } }))

/**
 * Uploads a file to a conversation (Slack's upload v2): files.getUploadURLExternal, the bytes to the URL it gives,
 * files.completeUploadExternal into the channel (and thread), `caption` as the file's comment.
 */
export const uploadFile = (api: SlackApi, target: Target, file: OutgoingFile, caption: string) =>
  Effect.gen(function*() {
    const slot = yield* api.callForm("files.getUploadURLExternal", { filename: file.name, length: String(file.bytes.length) }, UploadUrl)
    yield* api.upload(slot.upload_url, file.bytes, file.name)
    yield* api.callForm("files.completeUploadExternal", {
      files: JSON.stringify([{ id: slot.file_id, title: file.name }]),
      channel_id: target.channel,
      ...(target.threadTs === undefined ? {} : { thread_ts: target.threadTs }),
      ...(caption === "" ? {} : { initial_comment: caption })
    }, Completed)
  }).pipe(Effect.withSpan("kern.slack.uploadFile"))
