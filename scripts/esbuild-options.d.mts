import type { BuildOptions } from "esbuild"

export declare const external: ReadonlyArray<string>
export declare const shipped: BuildOptions
export declare const commonJs: BuildOptions
export declare const cachedScript: BuildOptions & { readonly define: Record<string, string> }
