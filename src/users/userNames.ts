// How the operator writes a pairing code and a user on a command line, and what is wrong with one that is not
// written so: the command line checks the shape before anything opens kern.db, and PairingStore checks it again for
// the kern_pair tool. Plain functions, so that `kern --help` loads nothing more.

/** `KERN-` and four letters or digits, without the ones people confuse (0/O, 1/I). */
export const codePattern = /^KERN-[A-HJ-NP-Z2-9]{4}$/
export const codeAlphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"

/** A code as typed (`kern-7qx4 `) in the form codes are stored in. */
export const normalizeCode = (raw: string): string => raw.trim().toUpperCase()

/** Why `raw` cannot be a pairing code, or undefined when it can. */
export const pairingCodeProblem = (raw: string): string | undefined =>
  codePattern.test(normalizeCode(raw)) ? undefined : `"${raw}" is not a pairing code (they look like KERN-7QX4)`

/** How a user is named on the command line: `<interface>:<user id>`, e.g. `telegram:42`. */
export const userKey = (pairing: { readonly interface: string; readonly userId: string }) => `${pairing.interface}:${pairing.userId}`

/** A user named `<channel>:<user id>` (`telegram:42`) as its two parts; undefined when it is not written so. */
export const splitUserId = (id: string): { readonly channel: string; readonly userId: string } | undefined => {
  const at = id.indexOf(":")
  return at <= 0 || at === id.length - 1 ? undefined : { channel: id.slice(0, at), userId: id.slice(at + 1) }
}

/** Why `id` cannot name a user, or undefined when it can. */
export const userIdProblem = (id: string): string | undefined =>
  splitUserId(id) === undefined
    ? `"${id}" is not a user id: users are named <channel>:<id>, e.g. telegram:42 (see kern users)`
    : undefined
