// PDFs written by hand for the media tests: a real file structure (objects, a cross-reference table with byte
// offsets, a trailer) that PDF.js reads as any PDF, with one Helvetica text line per page, or none.

const escape = (text: string) => text.replace(/[\\()]/g, (c) => `\\${c}`)

/**
 * A PDF of `pages.length` pages; each page shows its string (none when it is `undefined`: a page without a text
 * layer, as a scan is). `repeat` makes that many pages that share the first page's content (a page bomb is cheap).
 */
export const makePdf = (pages: ReadonlyArray<string | undefined>, options: { readonly repeat?: number } = {}): Uint8Array => {
  const count = options.repeat ?? pages.length
  const objects: Array<string> = []
  // 1: catalog, 2: page tree, 3: font; then per distinct content a stream; then the pages.
  objects[1] = "<< /Type /Catalog /Pages 2 0 R >>"
  objects[3] = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
  const contents: Array<number | undefined> = []
  let next = 4
  for (const text of options.repeat === undefined ? pages : pages.slice(0, 1)) {
    if (text === undefined) {
      contents.push(undefined)
      continue
    }
    const stream = `BT /F1 12 Tf 72 720 Td (${escape(text)}) Tj ET`
    objects[next] = `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`
    contents.push(next)
    next++
  }
  const kids: Array<number> = []
  for (let index = 0; index < count; index++) {
    const content = options.repeat === undefined ? contents[index] : contents[0]
    objects[next] = `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >>${
      content === undefined ? "" : ` /Contents ${content} 0 R`
    } >>`
    kids.push(next)
    next++
  }
  objects[2] = `<< /Type /Pages /Kids [${kids.map((id) => `${id} 0 R`).join(" ")}] /Count ${count} >>`
  let body = "%PDF-1.4\n"
  const offsets: Array<number> = []
  for (let id = 1; id < next; id++) {
    offsets[id] = body.length
    body += `${id} 0 obj\n${objects[id]}\nendobj\n`
  }
  const xref = body.length
  body += `xref\n0 ${next}\n0000000000 65535 f \n`
  for (let id = 1; id < next; id++) body += `${String(offsets[id]).padStart(10, "0")} 00000 n \n`
  body += `trailer\n<< /Size ${next} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`
  return new TextEncoder().encode(body)
}
