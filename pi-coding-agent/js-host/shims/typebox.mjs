// pi-rs's typebox for extensions: the Type builder, producing the same JSON Schema objects.
const Kind = Symbol.for("TypeBox.Kind");
const OptionalKind = Symbol.for("TypeBox.Optional");

const schema = (kind, body, options) => {
	const out = { ...(options ?? {}), ...body };
	Object.defineProperty(out, Kind, { value: kind, enumerable: false });
	return out;
};

export const Type = {
	String: (options) => schema("String", { type: "string" }, options),
	Number: (options) => schema("Number", { type: "number" }, options),
	Integer: (options) => schema("Integer", { type: "integer" }, options),
	Boolean: (options) => schema("Boolean", { type: "boolean" }, options),
	Null: (options) => schema("Null", { type: "null" }, options),
	Any: (options) => schema("Any", {}, options),
	Unknown: (options) => schema("Unknown", {}, options),
	Literal: (value, options) => schema("Literal", { const: value, type: typeof value }, options),
	Array: (items, options) => schema("Array", { type: "array", items }, options),
	Tuple: (items, options) =>
		schema("Tuple", { type: "array", items, additionalItems: false, minItems: items.length, maxItems: items.length }, options),
	Union: (anyOf, options) => schema("Union", { anyOf }, options),
	Intersect: (allOf, options) => schema("Intersect", { allOf }, options),
	Enum: (values, options) => schema("Union", { anyOf: Object.values(values).map((v) => Type.Literal(v)) }, options),
	Record: (key, value, options) => schema("Record", { type: "object", patternProperties: { "^(.*)$": value } }, options),
	Object: (properties, options) => {
		const required = Object.keys(properties).filter((k) => !properties[k][OptionalKind]);
		const props = {};
		for (const [k, v] of Object.entries(properties)) props[k] = v;
		return schema("Object", { type: "object", properties: props, ...(required.length > 0 ? { required } : {}) }, options);
	},
	Optional: (inner) => {
		const out = { ...inner };
		Object.defineProperty(out, OptionalKind, { value: "Optional", enumerable: false });
		if (inner[Kind]) Object.defineProperty(out, Kind, { value: inner[Kind], enumerable: false });
		return out;
	},
	Readonly: (inner) => inner,
	Unsafe: (options) => schema("Unsafe", {}, options),
	Ref: (ref, options) => schema("Ref", { $ref: typeof ref === "string" ? ref : ref.$id }, options),
	Date: (options) => schema("Date", { type: "string", format: "date-time" }, options),
	Void: (options) => schema("Void", { type: "null" }, options),
};

export { Kind, OptionalKind };
export const Static = undefined;
export default Type;
