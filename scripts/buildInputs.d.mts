export declare const buildInputs: ReadonlyArray<string>
export declare const fingerprint: (root: string, extra?: string) => string
