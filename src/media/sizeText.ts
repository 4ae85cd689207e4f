/**
 * A file's size as kern says it to a person (`1.2 MB`), exact in bytes below a mebibyte, where one decimal of MB would
 * say `0.0 MB`. One form for every channel's refusal of a file, so the same file is said alike wherever it came.
 */
export const sizeText = (bytes: number): string =>
  bytes < 1024 * 1024 ? `${bytes} bytes` : `${(bytes / 1024 / 1024).toFixed(1)} MB`
