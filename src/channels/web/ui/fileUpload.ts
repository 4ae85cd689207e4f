// A file the person picked, dropped or pasted into the composer, read for POST /message (its bytes in base64).

export interface PickedFile {
  readonly key: string
  readonly name: string
  readonly size: number
  /** The browser's guess from the name: used only to preview an image here; the server sniffs the bytes. */
  readonly type: string
  /** The bytes in base64, once read. */
  readonly data: Promise<string>
}

/** The bytes of `file` in base64 (a data URL's payload). */
const readBase64 = (file: File): Promise<string> =>
  new Promise((resolve, reject) => {
    const reader = new FileReader()
    reader.onload = () => {
      const url = typeof reader.result === "string" ? reader.result : ""
      resolve(url.slice(url.indexOf(",") + 1))
    }
    reader.onerror = () => reject(reader.error ?? new Error(`could not read ${file.name}`))
    reader.readAsDataURL(file)
  })

/** A pasted image has no name of its own ("image.png" from most browsers): it gets one that says what it is. */
const nameOf = (file: File, index: number): string => file.name.trim() === "" ? `pasted-${index + 1}` : file.name

export const pick = (files: ReadonlyArray<File>, counter: () => number): ReadonlyArray<PickedFile> =>
  files.map((file, index) => ({
    key: `f${counter()}`,
    name: nameOf(file, index),
    size: file.size,
    type: file.type,
    data: readBase64(file)
  }))

/** Images the composer previews (as a data URL, which the page's policy allows): raster types only. */
export const previewable: ReadonlySet<string> = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"])
