// typebox.mjs against the real typebox 1.4.3: the same JSON Schema text for every builder pi's
// examples use (and the common rest), and the same hidden markers (`~kind`, `~optional`).
import { both, check, finish, ours, real, same } from "./harness.mjs";

const mine = (await ours("typebox.mjs")).Type;
const theirs = (await real("typebox/build/index.mjs")).Type;

const cases = {
  string: (T) => T.String(),
  stringOptions: (T) => T.String({ description: "d", minLength: 1, maxLength: 9, pattern: "^a", format: "uri", default: "a" }),
  number: (T) => T.Number({ minimum: 0, maximum: 1, exclusiveMinimum: -1, multipleOf: 0.5 }),
  integer: (T) => T.Integer({ minimum: 1, default: 3 }),
  boolean: (T) => T.Boolean({ default: false, description: "b" }),
  null: (T) => T.Null(),
  any: (T) => T.Any({ description: "anything" }),
  unknown: (T) => T.Unknown(),
  never: (T) => T.Never(),
  undefined: (T) => T.Undefined(),
  literalString: (T) => T.Literal("x", { description: "lit" }),
  literalNumber: (T) => T.Literal(3),
  literalBool: (T) => T.Literal(false),
  array: (T) => T.Array(T.String(), { minItems: 1, maxItems: 3, uniqueItems: true, description: "a" }),
  object: (T) =>
    T.Object(
      {
        a: T.String({ description: "x" }),
        b: T.Optional(T.Number()),
        c: T.Array(T.Object({ d: T.Boolean() })),
      },
      { additionalProperties: false, description: "o" },
    ),
  objectAllOptional: (T) => T.Object({ a: T.Optional(T.String()), b: T.Optional(T.Integer()) }),
  objectEmpty: (T) => T.Object({}),
  nestedOptional: (T) => T.Object({ outer: T.Optional(T.Object({ inner: T.Optional(T.String()), req: T.String() })) }),
  union: (T) => T.Union([T.String(), T.Number(), T.Null()], { description: "u" }),
  unionLiterals: (T) => T.Union([T.Literal("a"), T.Literal("b"), T.Literal(1)]),
  intersect: (T) => T.Intersect([T.Object({ a: T.String() }), T.Object({ b: T.Optional(T.Number()) })]),
  tuple: (T) => T.Tuple([T.String(), T.Integer()], { description: "t" }),
  tupleEmpty: (T) => T.Tuple([]),
  enumObject: (T) => T.Enum({ A: "a", B: "b" }),
  enumNumeric: (T) => T.Enum({ A: 0, B: 1, 0: "A", 1: "B" }),
  enumArray: (T) => T.Enum(["x", "y"], { description: "e" }),
  recordString: (T) => T.Record(T.String(), T.Any()),
  recordNumber: (T) => T.Record(T.Number(), T.String(), { description: "r" }),
  recordInteger: (T) => T.Record(T.Integer(), T.Boolean()),
  recordLiterals: (T) => T.Record(T.Union([T.Literal("a"), T.Literal("b")]), T.String()),
  recordLiteral: (T) => T.Record(T.Literal("k"), T.Number(), { description: "one" }),
  partial: (T) => T.Partial(T.Object({ a: T.String(), b: T.Number() }), { description: "p" }),
  required: (T) => T.Required(T.Object({ a: T.Optional(T.String()), b: T.Number() })),
  pick: (T) => T.Pick(T.Object({ a: T.String(), b: T.Optional(T.Number()), c: T.Null() }, { description: "dropped" }), ["a", "b"]),
  omit: (T) => T.Omit(T.Object({ a: T.String(), b: T.Number() }), ["a"]),
  omitUnionKeys: (T) => T.Omit(T.Object({ a: T.String(), b: T.Number() }), T.Union([T.Literal("b")])),
  keyof: (T) => T.KeyOf(T.Object({ a: T.String(), b: T.Number() })),
  ref: (T) => T.Ref("Thing"),
  unsafe: (T) => T.Unsafe({ type: "string", enum: ["a", "b"], description: "s" }),
  readonly: (T) => T.Object({ a: T.Readonly(T.String()), b: T.Optional(T.Readonly(T.String())) }),
  symbolOptionKey: (T) => T.String({ [Symbol("hidden")]: 1, description: "kept" }),
  sharedSchema: (T) => {
    const shared = T.String();
    return [T.Object({ a: shared, b: T.Optional(shared) }), shared];
  },
  // Every parameter schema the priority examples build (question, todo, dynamic-tools, tool-override, hello).
  questionParams: (T) =>
    T.Object({
      question: T.String({ description: "The question to ask the user" }),
      options: T.Array(
        T.Object({
          label: T.String({ description: "Display label for the option" }),
          description: T.Optional(T.String({ description: "Optional description shown below label" })),
        }),
        { description: "Options for the user to choose from" },
      ),
    }),
  readOverride: (T) =>
    T.Object({
      path: T.String({ description: "Path to the file to read (relative or absolute)" }),
      offset: T.Optional(T.Number({ description: "Line number to start reading from (1-indexed)" })),
      limit: T.Optional(T.Number({ description: "Maximum number of lines to read" })),
    }),
};

const hiddenMarkers = (schema) => {
  const out = {};
  const walk = (value, path) => {
    if (value === null || typeof value !== "object") return;
    for (const key of ["~kind", "~optional", "~readonly"]) {
      if (key in value) out[`${path}.${key}`] = value[key];
    }
    for (const key of Object.keys(value)) walk(value[key], `${path}.${key}`);
  };
  walk(schema, "$");
  return out;
};

for (const [name, build] of Object.entries(cases)) {
  both(`json ${name}`, (T) => JSON.stringify(build(T)), mine, theirs);
  both(`markers ${name}`, (T) => hiddenMarkers(build(T)), mine, theirs);
  both(`IsOptional ${name}`, (T) => T.IsOptional(build(T)), mine, theirs);
}

for (const kind of ["Object", "String", "Array", "Union", "Literal"]) {
  const sample = (T) => ({ Object: T.Object({}), String: T.String(), Array: T.Array(T.Any()), Union: T.Union([]), Literal: T.Literal(1) })[kind];
  for (const guard of ["IsObject", "IsString", "IsArray", "IsUnion", "IsLiteral"]) {
    both(`${guard}(${kind})`, (T) => T[guard](sample(T)), mine, theirs);
  }
}

// Builders hand back fresh objects: Optional does not mark the schema it was given.
const base = mine.String();
mine.Optional(base);
check("Optional leaves its argument alone", mine.IsOptional(base) === false);
same("default export is Type", (await ours("typebox.mjs")).default === mine, true);

finish("typebox");
