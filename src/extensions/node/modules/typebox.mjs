// pi-rs's own `typebox` module for pi extensions (also served as `@sinclair/typebox`).
//
// pi hands its extensions typebox 1.4 (the `typebox` package; `@sinclair/typebox` is an alias
// for it). Extensions use it to describe tool parameters; what matters is the JSON Schema a
// builder returns, because that object is what reaches the model. Every builder here returns the
// same enumerable keys, in the same order, as typebox 1.4.3 does, so `JSON.stringify` of a
// schema is byte-for-byte the same. typebox's bookkeeping (`~kind`, `~optional`, `~readonly`)
// lives in non-enumerable keys, as in typebox, so it never appears in JSON; symbol keys in the
// options are dropped by JSON for the same reason.
//
// Written for pi-rs; covers the builders pi's examples and docs use plus the common rest.
// `Static` and the other type-level helpers are TypeScript types only and vanish when the
// extension is transpiled. Not provided: typebox's type-level computing builders (Conditional,
// Mapped, TemplateLiteral parsing beyond a plain pattern, Cyclic, Module, Script, codecs) and the
// `typebox/value` / `typebox/compile` validators (see docs/extensions.md).

/** Defines a non-enumerable bookkeeping key, as typebox keeps `~kind` out of JSON. */
function hidden(target, key, value) {
  Object.defineProperty(target, key, { value, writable: true, enumerable: false, configurable: true });
  return target;
}

/** Copies a schema with its enumerable keys and its hidden typebox markers. */
function cloneSchema(schema) {
  const out = {};
  for (const key of Reflect.ownKeys(schema)) {
    const desc = Object.getOwnPropertyDescriptor(schema, key);
    if (desc) Object.defineProperty(out, key, desc);
  }
  return out;
}

/** Builds `{ ...base, ...options }` tagged with `kind`. */
function make(kind, base, options) {
  const out = { ...base, ...(options ?? {}) };
  return hidden(out, "~kind", kind);
}

function isOptional(schema) {
  return schema !== null && typeof schema === "object" && schema["~optional"] === true;
}

function kindOf(schema) {
  return schema !== null && typeof schema === "object" ? schema["~kind"] : undefined;
}

function Any(options) {
  return make("Any", {}, options);
}
function Unknown(options) {
  return make("Unknown", {}, options);
}
function String(options) {
  return make("String", { type: "string" }, options);
}
function Number(options) {
  return make("Number", { type: "number" }, options);
}
function Integer(options) {
  return make("Integer", { type: "integer" }, options);
}
function Boolean(options) {
  return make("Boolean", { type: "boolean" }, options);
}
function Null(options) {
  return make("Null", { type: "null" }, options);
}
function Undefined(options) {
  return make("Undefined", { type: "undefined" }, options);
}
function Void(options) {
  return make("Void", { type: "void" }, options);
}
function Symbol_(options) {
  return make("Symbol", { type: "symbol" }, options);
}
function BigInt_(options) {
  return make("BigInt", { type: "bigint" }, options);
}
function Never(options) {
  return make("Never", { not: {} }, options);
}

function Literal(value, options) {
  const type = typeof value === "bigint" ? "bigint" : typeof value;
  if (type !== "string" && type !== "number" && type !== "boolean" && type !== "bigint") {
    throw new Error(`Invalid Literal value: ${value}`);
  }
  return make("Literal", { type, const: value }, options);
}

function Array_(items, options) {
  return make("Array", { type: "array", items }, options);
}

function Object_(properties, options) {
  const required = Object.keys(properties).filter((key) => !isOptional(properties[key]));
  const base = required.length > 0 ? { type: "object", required, properties } : { type: "object", properties };
  return make("Object", base, options);
}

function Union(anyOf, options) {
  return make("Union", { anyOf }, options);
}

function Intersect(allOf, options) {
  return make("Intersect", { allOf }, options);
}

function Tuple(items, options) {
  return make("Tuple", { type: "array", additionalItems: false, items, minItems: items.length }, options);
}

/** Keeps the values of a TypeScript enum object, dropping numeric enums' reverse mappings. */
function enumValues(source) {
  if (globalThis.Array.isArray(source)) return [...source];
  const keys = Object.keys(source).filter((key) => !/^-?\d+$/.test(key) || typeof source[key] !== "string");
  return keys.map((key) => source[key]);
}

function Enum(source, options) {
  return make("Enum", { enum: enumValues(source) }, options);
}

function Optional(schema) {
  return hidden(cloneSchema(schema), "~optional", true);
}

function Readonly(schema) {
  return hidden(cloneSchema(schema), "~readonly", true);
}

/** The string keys a key schema stands for, or undefined when it is a pattern (string/number). */
function literalKeys(key) {
  const kind = kindOf(key);
  if (kind === "Literal") return [globalThis.String(key.const)];
  if (kind === "Union") {
    const keys = [];
    for (const member of key.anyOf) {
      const inner = literalKeys(member);
      if (inner === undefined) return undefined;
      keys.push(...inner);
    }
    return keys;
  }
  if (kind === "Enum") return key.enum.map((value) => globalThis.String(value));
  return undefined;
}

const INTEGER_PATTERN = "^-?(?:0|[1-9][0-9]*)$";
const NUMBER_PATTERN = "^-?(?:0|[1-9][0-9]*)(?:\\.[0-9]+)?$";
const STRING_PATTERN = "^.*$";

function Record(key, value, options) {
  const keys = literalKeys(key);
  if (keys !== undefined) {
    const properties = {};
    for (const name of keys) properties[name] = value;
    return Object_(properties, options);
  }
  const kind = kindOf(key);
  let pattern = STRING_PATTERN;
  if (kind === "Integer") pattern = INTEGER_PATTERN;
  else if (kind === "Number") pattern = NUMBER_PATTERN;
  else if (typeof key.pattern === "string") pattern = key.pattern;
  return make("Record", { type: "object", patternProperties: { [pattern]: value } }, options);
}

function objectProperties(schema) {
  if (kindOf(schema) !== "Object") throw new Error("expected an Object schema");
  return schema.properties;
}

function keysOf(keys) {
  if (globalThis.Array.isArray(keys)) return keys.map((k) => globalThis.String(k));
  return literalKeys(keys) ?? [];
}

function Partial(schema, options) {
  const properties = {};
  for (const [name, prop] of Object.entries(objectProperties(schema))) properties[name] = Optional(prop);
  return Object_(properties, options);
}

function Required(schema, options) {
  const properties = {};
  for (const [name, prop] of Object.entries(objectProperties(schema))) {
    const copy = cloneSchema(prop);
    delete copy["~optional"];
    properties[name] = copy;
  }
  return Object_(properties, options);
}

function Pick(schema, keys, options) {
  const wanted = new Set(keysOf(keys));
  const properties = {};
  for (const [name, prop] of Object.entries(objectProperties(schema))) {
    if (wanted.has(name)) properties[name] = prop;
  }
  return Object_(properties, options);
}

function Omit(schema, keys, options) {
  const dropped = new Set(keysOf(keys));
  const properties = {};
  for (const [name, prop] of Object.entries(objectProperties(schema))) {
    if (!dropped.has(name)) properties[name] = prop;
  }
  return Object_(properties, options);
}

function KeyOf(schema, options) {
  return Union(
    Object.keys(objectProperties(schema)).map((name) => Literal(name)),
    options,
  );
}

function Ref(ref, options) {
  return make("Ref", { $ref: ref }, options);
}

function Unsafe(schema) {
  return hidden({ ...schema }, "~unsafe", null);
}

/** Guards over the hidden `~kind` marker, as typebox's `Type.Is*`. */
function isKind(kind) {
  return (value) => kindOf(value) === kind;
}

export const Type = {
  Any,
  Unknown,
  String,
  Number,
  Integer,
  Boolean,
  Null,
  Undefined,
  Void,
  Symbol: Symbol_,
  BigInt: BigInt_,
  Never,
  Literal,
  Array: Array_,
  Object: Object_,
  Union,
  Intersect,
  Tuple,
  Enum,
  Optional,
  Readonly,
  Record,
  Partial,
  Required,
  Pick,
  Omit,
  KeyOf,
  Ref,
  Unsafe,
  IsOptional: isOptional,
  IsReadonly: (value) => value !== null && typeof value === "object" && value["~readonly"] === true,
  IsKind: (value, kind) => kindOf(value) === kind,
  IsSchema: (value) => kindOf(value) !== undefined || (value !== null && typeof value === "object" && "~unsafe" in value),
  IsAny: isKind("Any"),
  IsUnknown: isKind("Unknown"),
  IsString: isKind("String"),
  IsNumber: isKind("Number"),
  IsInteger: isKind("Integer"),
  IsBoolean: isKind("Boolean"),
  IsNull: isKind("Null"),
  IsLiteral: isKind("Literal"),
  IsArray: isKind("Array"),
  IsObject: isKind("Object"),
  IsUnion: isKind("Union"),
  IsIntersect: isKind("Intersect"),
  IsTuple: isKind("Tuple"),
  IsEnum: isKind("Enum"),
  IsRecord: isKind("Record"),
  IsRef: isKind("Ref"),
  IsUnsafe: (value) => value !== null && typeof value === "object" && "~unsafe" in value,
};

export {
  Any,
  Array_ as Array,
  BigInt_ as BigInt,
  Boolean,
  Enum,
  Integer,
  Intersect,
  KeyOf,
  Literal,
  Never,
  Null,
  Number,
  Object_ as Object,
  Omit,
  Optional,
  Partial,
  Pick,
  Readonly,
  Record,
  Ref,
  Required,
  String,
  Symbol_ as Symbol,
  Tuple,
  Undefined,
  Union,
  Unknown,
  Unsafe,
  Void,
};

export default Type;
