/** A few bytes of an Ogg stream (the header file-type sniffs as audio/ogg): what a voice note starts with. */
export const oggVoice = (): Uint8Array => {
  const bytes = new Uint8Array(600).fill(1)
  bytes.set(new TextEncoder().encode("OggS"), 0)
  bytes.set([0, 2], 4)
  bytes.set(new TextEncoder().encode("\u0001vorbis"), 28)
  return bytes
}
