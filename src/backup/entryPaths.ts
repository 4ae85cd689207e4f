/**
 * The entries a kern backup holds, by their path in the archive: the manifest, the memory repository's bundle, and
 * the files of `.kern/` at the same paths as in the agent folder. A restore writes nothing else, so an archive entry
 * is checked against these before a byte of it is written.
 */

export const bundleEntry = "memory.bundle"
export const databaseEntry = ".kern/kern.db"
export const configEntry = ".kern/config.json"
export const envEntry = ".kern/.env"
export const sessionsPrefix = ".kern/sessions/"
export const artifactsPrefix = ".kern/artifacts/"
/** Files that came with messages (src/media/MediaStore.ts): one folder, each file named by its sha256. */
export const mediaPrefix = ".kern/media/"

/** A name's longest path: far beyond what kern writes (a session id, an artifact's sha256). */
const maxPathLength = 512

const segmentProblem = (segment: string): string | undefined => {
  if (segment === "" || segment === "." || segment === "..") return `it has a "${segment}" segment`
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f\\]/.test(segment)) return "it holds a control character or a backslash"
  return undefined
}

/** Why `path` is not an entry a kern backup may hold (a way out of the folder, a file kern never writes), or undefined. */
export const entryPathProblem = (path: string): string | undefined => {
  if (path.length === 0 || path.length > maxPathLength) return `its length (${path.length}) is not 1 to ${maxPathLength}`
  if (path.startsWith("/")) return "it is an absolute path"
  const segments = path.split("/")
  for (const segment of segments) {
    const problem = segmentProblem(segment)
    if (problem !== undefined) return problem
  }
  if ([bundleEntry, databaseEntry, configEntry, envEntry].includes(path)) return undefined
  // Sessions are one folder of files; artifacts may nest.
  if (path.startsWith(sessionsPrefix) && segments.length === 3) return undefined
  if (path.startsWith(artifactsPrefix) && segments.length >= 3) return undefined
  if (path.startsWith(mediaPrefix) && segments.length === 3) return undefined
  return `it is none of the files a kern backup holds (${bundleEntry}, ${databaseEntry}, ${configEntry}, ${envEntry}, ` +
    `${sessionsPrefix}…, ${artifactsPrefix}…, ${mediaPrefix}…)`
}
