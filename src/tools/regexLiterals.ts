/**
 * Strings a regular expression cannot match without: grep looks for them in a file's bytes before it decodes the
 * file and runs the expression (GNU grep does the same), so the files without them, most of a tree, cost one
 * `Buffer.indexOf` instead of a UTF-8 decode, a regex scan and the garbage.
 *
 * `requiredLiterals(regex)` answers ASCII strings of which every match of `regex` contains at least one, or undefined
 * when it cannot tell. It is a necessary condition only: a file holding one of them is still searched by the regex.
 * Why a byte search is as good as a search of the decoded text: an ASCII byte decodes to the same character whatever
 * surrounds it (UTF-8 never uses bytes below 0x80 inside a multi-byte character, and the decoder puts U+FFFD in place
 * of a broken sequence, then reads the next byte afresh), and no ASCII character comes from anything else; so the
 * text holds an ASCII string exactly where the bytes hold it.
 *
 * The parse is of the pattern as V8 reads it without the `u` or `v` flag (with Annex B's leniencies), and it is
 * conservative: any construct it does not read exactly (a group's quantified content, a character class, an escape
 * naming a class or a back reference, a non-ASCII character) only ends the literal run it is in; a construct whose
 * length it cannot be sure of gives up (undefined). A flag that changes what a character matches (`i`, `u`, `v`, `y`)
 * gives up too.
 */

/** A literal any match must hold one of: the alternatives of a disjunction. */
type AnyOf = ReadonlyArray<string>

/** The shortest literal worth searching for: one character is in nearly every file. */
const minLength = 2

const isHex = (code: number) => (code >= 48 && code <= 57) || (code >= 65 && code <= 70) || (code >= 97 && code <= 102)
const isDigit = (code: number) => code >= 48 && code <= 57
const isAsciiLetter = (code: number) => (code >= 65 && code <= 90) || (code >= 97 && code <= 122)

/** Of a branch's requirements, the one searching for which rules out most: the longest shortest alternative. */
const best = (requirements: ReadonlyArray<AnyOf>): AnyOf | undefined => {
  let chosen: AnyOf | undefined
  let score = minLength - 1
  for (const requirement of requirements) {
    const shortest = Math.min(...requirement.map((literal) => literal.length))
    if (shortest > score) {
      chosen = requirement
      score = shortest
    }
  }
  return chosen
}

const parse = (source: string): AnyOf | undefined => {
  let at = 0
  // Set when the parse meets what it does not read exactly; it then stops where it is and nothing is answered.
  let unsure = false
  const giveUp = () => {
    unsure = true
    at = source.length
  }
  const counted = /\{(\d+)(,\d*)?\}/y

  /** A `{n}`, `{n,}` or `{n,m}` quantifier at `at`: its least count and length; undefined for a literal `{`. */
  const braces = (): { readonly least: number; readonly length: number } | undefined => {
    counted.lastIndex = at
    const found = counted.exec(source)
    return found === null ? undefined : { least: Number(found[1]), length: found[0].length }
  }

  /** A disjunction up to `)` or the end: what each of its branches requires, as one requirement (or none). */
  const disjunction = (): AnyOf | undefined => {
    const branches: Array<AnyOf | undefined> = [best(alternative())]
    while (source[at] === "|") {
      at++
      branches.push(best(alternative()))
    }
    return branches.every((branch) => branch !== undefined) ? branches.flat() : undefined
  }

  /** A group from its `(`: what it requires, or undefined (a lookaround, a modifier group, or nothing required). */
  const group = (): AnyOf | undefined => {
    at++
    let kept = true
    if (source[at] === "?") {
      const marker = /\?(?::|<(?![=!])[^>]*>|[=!]|<[=!]|[a-zA-Z]*(?:-[a-zA-Z]*)?:)/y
      marker.lastIndex = at
      const found = marker.exec(source)
      if (found === null) {
        giveUp()
        return undefined
      }
      // A lookaround or a modifier group (`(?i:…)`) is read and nothing of it kept.
      kept = found[0] === "?:" || found[0].startsWith("?<") && !/^\?<[=!]/.test(found[0])
      at += found[0].length
    }
    const inner = disjunction()
    if (source[at] !== ")") {
      giveUp()
      return undefined
    }
    at++
    return kept ? inner : undefined
  }

  /** A branch: the literal runs and groups every match of it holds. */
  const alternative = (): Array<AnyOf> => {
    const requirements: Array<AnyOf> = []
    let run = ""
    const endRun = () => {
      if (run.length >= minLength) requirements.push([run])
      run = ""
    }
    while (at < source.length && source[at] !== "|" && source[at] !== ")") {
      const char = source[at]!
      const code = source.charCodeAt(at)
      // What the next quantifier applies to: a character of the run, or something else (a group, a class...).
      let literal = false
      let inner: AnyOf | undefined
      if (char === "(") {
        endRun()
        inner = group()
      } else if (char === "[") {
        endRun()
        at++
        if (source[at] === "^") at++
        // In JavaScript `[]` is an empty class: a `]` first closes it.
        while (at < source.length && source[at] !== "]") at += source[at] === "\\" ? 2 : 1
        if (at >= source.length) giveUp()
        at++
      } else if (char === "\\") {
        const next = source.charCodeAt(at + 1)
        if (next < 128 && !isAsciiLetter(next) && !isDigit(next)) {
          // An identity escape of an ASCII character (`\.`, `\/`, `\-`): that character.
          run += source[at + 1]
          literal = true
          at += 2
        } else if (Number.isNaN(next) || isDigit(next) || next === 107 /* k */ || next === 99 /* c */) {
          // A back reference, an octal escape or `\k<name>` (their length depends on the groups), or `\c`: not read.
          giveUp()
        } else {
          endRun()
          if (next === 120 /* x */) {
            at += isHex(source.charCodeAt(at + 2)) && isHex(source.charCodeAt(at + 3)) ? 4 : 2
          } else if (next === 117 /* u */) {
            let hex = 0
            while (hex < 4 && isHex(source.charCodeAt(at + 2 + hex))) hex++
            at += hex === 4 ? 6 : 2
          } else {
            // A class (\d, \w, \s…), an assertion (\b, \B), a control (\n, \t…) or a non-ASCII identity escape.
            at += 2
          }
        }
      } else if (char === "*" || char === "+" || char === "?" || (char === "{" && braces() !== undefined)) {
        // A quantifier with nothing before it does not compile; the caller compiled the pattern.
        giveUp()
      } else if (char === "." || char === "^" || char === "$" || code >= 128) {
        endRun()
        at++
      } else {
        // Any other ASCII character, `{`, `}` and `]` included (Annex B), is itself.
        run += char
        literal = true
        at++
      }
      // The atom's quantifier, if any: a part that may occur zero times is required of no match.
      let least: number | undefined
      const quantifier = source[at]
      if (quantifier === "*" || quantifier === "?") {
        least = 0
        at++
      } else if (quantifier === "+") {
        least = 1
        at++
      } else if (quantifier === "{") {
        const count = braces()
        if (count !== undefined) {
          least = count.least
          at += count.length
        }
      }
      if (least !== undefined) {
        if (source[at] === "?") at++
        if (literal) {
          // The character repeated (or left out) ends the run: what follows is not right after it.
          if (least === 0) run = run.slice(0, -1)
          endRun()
        }
        if (least === 0) inner = undefined
      }
      if (inner !== undefined) requirements.push(inner)
    }
    endRun()
    return requirements
  }

  const required = disjunction()
  return unsure || at !== source.length ? undefined : required
}

/**
 * ASCII strings of which every match of `regex` holds at least one, each at least two characters long; undefined
 * when there are none or the pattern is not read (see above).
 */
export const requiredLiterals = (regex: RegExp): ReadonlyArray<string> | undefined => {
  if (/[iuvy]/.test(regex.flags)) return undefined
  const required = parse(regex.source)
  return required === undefined || required.length === 0 ? undefined : [...new Set(required)]
}
