export interface ImportEdge {
  readonly from: string
  readonly to: string
  readonly line: number
  readonly fromFolder: string
  readonly toFolder: string
}

export interface ImportGraph {
  readonly files: ReadonlyArray<string>
  readonly edges: ReadonlyArray<ImportEdge>
}

export interface FolderCycle {
  readonly folders: ReadonlyArray<string>
  readonly edges: ReadonlyArray<ImportEdge>
}

export interface CheckResult {
  readonly unplaced: ReadonlyArray<string>
  readonly upward: ReadonlyArray<ImportEdge>
  readonly cycles: ReadonlyArray<FolderCycle>
  readonly ok: boolean
}

export type Layers = ReadonlyArray<ReadonlyArray<string>>

export declare const layers: Layers
export declare const excluded: ReadonlyArray<string>
export declare const readGraph: (root: string, options?: { readonly excluded?: ReadonlyArray<string> }) => ImportGraph
export declare const check: (graph: ImportGraph, order?: Layers) => CheckResult
export declare const describe: (result: CheckResult, order?: Layers) => string
