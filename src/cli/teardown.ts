import * as Exit from "effect/Exit"

/**
 * How NodeRuntime.runMain ends a kern command: the program's number is the exit code; an interruption (a signal) is
 * `interruptedCode`; a defect is 1.
 */
export const exitCodeTeardown = (interruptedCode: number) => <E, A>(exit: Exit.Exit<E, A>, onExit: (code: number) => void) =>
  onExit(Exit.isSuccess(exit) && typeof exit.value === "number" ? exit.value : Exit.isInterrupted(exit) ? interruptedCode : 1)
