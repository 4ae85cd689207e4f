#!/usr/bin/env node
import("../dist/main.js").catch((error) => {
  if (error && error.code === "ERR_MODULE_NOT_FOUND" && String(error.message).includes("dist/main.js")) {
    process.stderr.write("kern: the build is missing; run `npm run build` in the kern repo\n")
    process.exit(1)
  }
  throw error
})
