import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { testDist } from "./build.js"

/**
 * A file of the test build's dist/, with what it imports when it is one of the library's chunks (dist/index.js and
 * its chunks): statically (`from"./x.js"`, `import"./x.js"`) and lazily (`import("./x.js")`).
 */
export const importsOf = (file: string) => {
  const source = NodeFs.readFileSync(NodePath.join(testDist, file), "utf8")
  const names = (pattern: RegExp) => [...source.matchAll(pattern)].map((match) => match[1]!)
  return {
    source,
    static: names(/(?:from|import)\s*"\.\/([^"]+\.js)"/g),
    lazy: names(/import\(\s*"\.\/([^"]+\.js)"\s*\)/g)
  }
}

/** Every JavaScript chunk of the test build: the library and its chunks. */
export const chunks = () => NodeFs.readdirSync(testDist).filter((file) => file.endsWith(".js"))
