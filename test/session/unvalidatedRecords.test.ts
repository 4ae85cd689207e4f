import { assert, describe, it } from "@effect/vitest"
import { Arbitrary, FastCheck as fc, Schema, SchemaAST } from "effect"
import { KernelEvent } from "../../src/kernel/EventLog.js"
import { AssistantMessage, Envelope, ToolResultMessage, UserMessage } from "../../src/session/messages.js"
import { SessionRecord } from "../../src/session/SessionIndex.js"

// fast-check as effect bundles it: its Arbitrary builds with that one.
// The turn (TurnRunner.ts) and the event log (EventLog.ts) build these records without validating them again, from
// values already of the fields' types, and so does the session writer its count records (SessionStore.ts). That is only the same as validating while a field's type says all a
// validation would check: no refinement anywhere in the fields.
const classes = [
  { name: "Envelope", schema: Envelope },
  { name: "UserMessage", schema: UserMessage },
  { name: "AssistantMessage", schema: AssistantMessage },
  { name: "ToolResultMessage", schema: ToolResultMessage },
  { name: "KernelEvent", schema: KernelEvent },
  { name: "SessionRecord", schema: SessionRecord }
] as const

const refinements = (ast: SchemaAST.AST, seen = new Set<SchemaAST.AST>()): Array<string> => {
  if (seen.has(ast)) return []
  seen.add(ast)
  switch (ast._tag) {
    case "Refinement":
      return [String(ast), ...refinements(ast.from, seen)]
    case "Transformation":
      return [...refinements(ast.from, seen), ...refinements(ast.to, seen)]
    case "TypeLiteral":
      return [
        ...ast.propertySignatures.flatMap((p) => refinements(p.type, seen)),
        ...ast.indexSignatures.flatMap((i) => refinements(i.type, seen))
      ]
    case "Union":
      return ast.types.flatMap((t) => refinements(t, seen))
    case "TupleType":
      return [...ast.elements.flatMap((e) => refinements(e.type, seen)), ...ast.rest.flatMap((r) => refinements(r.type, seen))]
    case "Suspend":
      return refinements(ast.f(), seen)
    default:
      return []
  }
}

describe("records built without a second validation", () => {
  for (const { name, schema } of classes) {
    it(`${name}: no field has a refinement a validation would check beyond its type`, () => {
      assert.deepStrictEqual(refinements(Schema.typeSchema(Schema.Struct(schema.fields)).ast), [])
    })

    it(`${name}: built unvalidated from typed props, it is the validated instance (property)`, () => {
      const props = Arbitrary.make(Schema.typeSchema(Schema.Struct(schema.fields)))
      fc.assert(
        fc.property(props, (p) => {
          const Class = schema as unknown as new(props: unknown, options?: boolean) => object
          assert.deepStrictEqual(new Class(p, true), new Class(p))
        }),
        { numRuns: 300 }
      )
    })
  }

  it("the check sees a refinement where there is one", () => {
    assert.isAbove(refinements(Schema.typeSchema(Schema.Struct({ n: Schema.Int.pipe(Schema.nonNegative()) })).ast).length, 0)
  })
})
