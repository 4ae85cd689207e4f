import type { Plugin } from "esbuild"

export declare const deepen: (source: string) => string
export declare const deepImports: Plugin
