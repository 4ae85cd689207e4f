import { useEffect, useState } from "preact/hooks"
import { fileDetails, type FileView, isThumbnail, mediaUrl, sizeText } from "./attachments.js"
import { type PickedFile, previewable } from "./fileUpload.js"

// Files as the page shows them. Names and details are text (never markup); the only URL built is `media/<id>` of an
// id the decoder checked, relative to the page.

/** A message's files in the transcript: raster images as thumbnails that open the image, others as download chips. */
export const FileList = ({ files }: { readonly files: ReadonlyArray<FileView> }) => (
  <ul class="files" aria-label="Files">
    {files.map((file) =>
      isThumbnail(file)
        ? (
          <li key={file.id} class="file-thumb">
            <a href={mediaUrl(file)} target="_blank" rel="noopener noreferrer" title={`${file.name} (${fileDetails(file)})`}>
              <img src={mediaUrl(file)} alt={file.name} loading="lazy" />
            </a>
          </li>
        )
        : (
          <li key={file.id} class="file-chip">
            <a href={mediaUrl(file)} download={file.name} aria-label={`Download ${file.name}`}>
              <span class="file-name">{file.name}</span>
              <span class="file-details">{fileDetails(file)}</span>
            </a>
          </li>
        )
    )}
  </ul>
)

const Preview = ({ file }: { readonly file: PickedFile }) => {
  const [url, setUrl] = useState<string | undefined>(undefined)
  useEffect(() => {
    if (!previewable.has(file.type)) return
    let live = true
    file.data.then((data) => {
      if (live) setUrl(`data:${file.type};base64,${data}`)
    }, () => undefined)
    return () => {
      live = false
    }
  }, [file])
  return url === undefined ? null : <img class="pick-preview" src={url} alt="" />
}

/** The composer's files before they are sent: each with a preview (images), its size and a remove button. */
export const PickedFiles = ({ files, remove }: { readonly files: ReadonlyArray<PickedFile>; readonly remove: (key: string) => void }) => (
  <ul class="picked" aria-label="Files to send">
    {files.map((file) => (
      <li key={file.key} class="pick-chip">
        <Preview file={file} />
        <span class="file-name">{file.name}</span>
        <span class="file-details">{sizeText(file.size)}</span>
        <button type="button" class="link" aria-label={`Remove ${file.name}`} onClick={() => remove(file.key)}>×</button>
      </li>
    ))}
  </ul>
)
