// Evaluated in the QuickJS VM before a codemode script (file name "codemode-prelude.js").
// Evaluates to a function (bridge, toolsJson, globalsJson, storeJson) => { settle, run, stalled }.
// `bridge(kind, a, b, c)` takes strings only; "" stands for undefined:
//   "call" | "global": (id, name, argsJson)   "output": (kind, data, mimeType)
//   "done": ("1" | "0", valueJsonOrErrorJson, writesJson)
// The bridge stays in this closure, so scripts cannot reach it.
(function (bridge, toolsJson, globalsJson, storeJson) {
	"use strict";

	// Freeze what the built-in globals reach, so a script that patches a built-in (such as
	// Array.prototype.toJSON) cannot change what this prelude reports. Properties that ordinary code
	// overrides on instances become accessors that define an own property instead (the "override
	// mistake" of frozen prototypes).
	(function lockdown() {
		const overridable = new Set(["constructor", "name", "message", "toString", "toLocaleString", "valueOf", "toJSON"]);
		const seen = new Set([globalThis]);
		const queue = [];
		const visit = (v) => {
			if (((typeof v === "object" && v !== null) || typeof v === "function") && !seen.has(v)) {
				seen.add(v);
				queue.push(v);
			}
		};
		const overridableAccessor = (owner, key, value, enumerable) => {
			const pair = Object.getOwnPropertyDescriptor(
				{
					get slot() {
						return value;
					},
					set slot(next) {
						if (this === owner) throw new TypeError("Cannot assign to read only property '" + String(key) + "' of a built-in");
						if ((typeof this !== "object" || this === null) && typeof this !== "function") return;
						Object.defineProperty(this, key, { value: next, writable: true, enumerable: true, configurable: true });
					},
				},
				"slot",
			);
			Object.defineProperty(owner, key, { get: pair.get, set: pair.set, enumerable, configurable: false });
			visit(pair.get);
			visit(pair.set);
		};
		for (const key of Reflect.ownKeys(globalThis)) {
			const d = Object.getOwnPropertyDescriptor(globalThis, key);
			visit(d.value);
			visit(d.get);
			visit(d.set);
			if ("value" in d && d.configurable) Object.defineProperty(globalThis, key, { writable: false, configurable: false });
		}
		visit(Object.getPrototypeOf(function* () {}));
		visit(Object.getPrototypeOf(async function () {}));
		visit(Object.getPrototypeOf(async function* () {}));
		visit(Object.getPrototypeOf(Int8Array));
		visit(Object.getPrototypeOf([][Symbol.iterator]()));
		visit(Object.getPrototypeOf(new Map()[Symbol.iterator]()));
		visit(Object.getPrototypeOf(new Set()[Symbol.iterator]()));
		visit(Object.getPrototypeOf(""[Symbol.iterator]()));
		visit(Object.getPrototypeOf(/a/[Symbol.matchAll]("")));
		while (queue.length > 0) {
			const object = queue.pop();
			visit(Object.getPrototypeOf(object));
			const all = Object.getOwnPropertyDescriptors(object);
			for (const key of Reflect.ownKeys(all)) {
				const d = all[key];
				if ("value" in d) {
					visit(d.value);
					if (d.writable && d.configurable && (object === Object.prototype || overridable.has(key))) {
						overridableAccessor(object, key, d.value, d.enumerable);
					}
				} else {
					visit(d.get);
					visit(d.set);
				}
			}
			Object.freeze(object);
		}
	})();

	const stringify = JSON.stringify;
	const parse = JSON.parse;
	const promiseThen = Promise.prototype.then;
	const ErrorCtor = Error;
	const TypeErrorCtor = TypeError;
	const RangeErrorCtor = RangeError;
	const pending = new Map();
	let nextId = 1;
	let finished = false;
	const EXIT = Object.freeze({});
	const opt = (v) => (v === undefined ? "" : v);

	function done(ok, payload, writes) {
		if (finished) return;
		finished = true;
		bridge("done", ok ? "1" : "0", opt(payload), opt(writes));
	}

	const serialize = (value) => (value === undefined ? undefined : stringify(value));

	// "Name: message" first, as V8 prints errors, then the script's own frames.
	function errorText(error) {
		const head = error.message ? error.name + ": " + error.message : String(error.name);
		const frames =
			typeof error.stack === "string"
				? error.stack.split("\n").filter((line) => line.trim() && !line.includes("codemode-prelude.js"))
				: [];
		return [head, ...frames].join("\n");
	}

	function format(value) {
		if (typeof value === "string") return value;
		if (value instanceof ErrorCtor) return errorText(value);
		if (typeof value === "number") return String(value);
		try {
			const json = stringify(value);
			return json === undefined ? String(value) : json;
		} catch {
			return String(value);
		}
	}

	function describeError(error) {
		try {
			if (error instanceof ErrorCtor) {
				return stringify({ name: String(error.name), message: String(error.message), stack: errorText(error) });
			}
			return stringify({ message: String(format(error)) });
		} catch {
			return stringify({ message: "The script threw a value that cannot be described" });
		}
	}

	function caller(kind, name, spread) {
		return (...args) =>
			new Promise((resolve, reject) => {
				let json;
				try {
					json = serialize(spread ? args : args[0]);
				} catch (error) {
					reject(error);
					return;
				}
				const id = nextId++;
				pending.set(id, { resolve, reject });
				bridge(kind, String(id), name, opt(json));
			});
	}

	const tools = Object.create(null);
	const allTools = [];
	for (const { name, jsName, description } of parse(toolsJson)) {
		const fn = caller("call", name, false);
		if (!(jsName in tools)) {
			tools[jsName] = fn;
			allTools.push(Object.freeze({ name: jsName, description }));
		}
		if (!(name in tools)) tools[name] = fn;
	}
	Object.freeze(tools);
	Object.freeze(allTools);

	// A missing member throws an error naming the close matches instead of a later "not a function".
	const comparable = (name) => name.toLowerCase().replace(/[^a-z0-9]/g, "");
	function guard(target, label, names, hint) {
		return new Proxy(target, {
			get(object, property, receiver) {
				if (
					typeof property !== "string" ||
					property in object ||
					property in Object.prototype ||
					property === "then" ||
					property === "toJSON"
				) {
					return Reflect.get(object, property, receiver);
				}
				const wanted = comparable(property);
				const exact = names.filter((n) => comparable(n) === wanted);
				const close =
					exact.length > 0
						? exact
						: names.filter((n) => wanted && (comparable(n).includes(wanted) || wanted.includes(comparable(n))));
				let message = label + "." + property + " does not exist.";
				if (close.length > 0) message += " Did you mean " + close.slice(0, 5).map((n) => label + "." + n).join(", ") + "?";
				else if (names.length <= 20) message += " Available: " + names.join(", ") + ".";
				if (hint) message += " " + hint;
				message += ' Check for a member with "' + property + '" in ' + label + ".";
				throw new TypeErrorCtor(message);
			},
		});
	}
	const toolsProxy = guard(
		tools,
		"tools",
		allTools.map((t) => t.name),
		"ALL_TOOLS lists every tool; searchTools(query) finds tools by topic.",
	);

	const namespaces = new Map();
	for (const { name, spread } of parse(globalsJson)) {
		const fn = caller("global", name, spread);
		const dot = name.indexOf(".");
		if (dot === -1) {
			Object.defineProperty(globalThis, name, { value: fn, enumerable: true });
			continue;
		}
		const ns = name.slice(0, dot);
		if (!namespaces.has(ns)) namespaces.set(ns, Object.create(null));
		namespaces.get(ns)[name.slice(dot + 1)] = fn;
	}
	for (const [ns, members] of namespaces) {
		Object.freeze(members);
		Object.defineProperty(globalThis, ns, { value: guard(members, ns, Object.keys(members)), enumerable: true });
	}

	const MAX_VALUE = __MAX_STORE_VALUE_CHARS__;
	const MAX_TOTAL = __MAX_STORE_TOTAL_CHARS__;
	const MAX_OUTPUT_CHARS = __MAX_OUTPUT_CHARS__;
	const MAX_OUTPUT_ITEMS = __MAX_OUTPUT_ITEMS__;
	const stored = new Map(Object.entries(parse(storeJson)));
	const writes = new Map();
	let storedChars = 0;
	for (const [key, json] of stored) storedChars += key.length + json.length;
	const STORE_HINT =
		"store() is for small state such as IDs or summaries. Show images with image(), keep large data in variables, or write it to a file with a tool.";

	function checkKey(name, key) {
		if (typeof key !== "string") throw new TypeError(name + "() key must be a string");
	}

	function store(key, value) {
		checkKey("store", key);
		const previous = stored.has(key) ? key.length + stored.get(key).length : 0;
		if (value === undefined) {
			stored.delete(key);
			storedChars -= previous;
			writes.set(key, undefined);
			return;
		}
		let json;
		try {
			json = stringify(value);
		} catch (error) {
			throw new TypeError("store(" + stringify(key) + ") value is not JSON-serializable: " + format(error));
		}
		if (json === undefined) throw new TypeError("store(" + stringify(key) + ") value is not JSON-serializable");
		if (json.length > MAX_VALUE) {
			throw new RangeError(
				"store(" + stringify(key) + ") value has " + json.length + " characters of JSON, more than the limit of " + MAX_VALUE + ". " + STORE_HINT,
			);
		}
		const next = storedChars - previous + key.length + json.length;
		if (next > MAX_TOTAL) {
			throw new RangeError(
				"store is full: stored values would exceed " + MAX_TOTAL + " characters of JSON. Delete keys with store(key, undefined). " + STORE_HINT,
			);
		}
		stored.set(key, json);
		storedChars = next;
		writes.set(key, json);
	}

	function load(key) {
		checkKey("load", key);
		const json = stored.get(key);
		return json === undefined ? undefined : parse(json);
	}

	function serializeWrites() {
		const entries = [];
		for (const [key, json] of writes) entries.push(json === undefined ? [key] : [key, json]);
		return stringify(entries);
	}

	Object.defineProperty(globalThis, "store", { value: store, enumerable: true });
	Object.defineProperty(globalThis, "load", { value: load, enumerable: true });

	let outputChars = 0;
	let outputItems = 0;
	function output(kind, data, mimeType) {
		if (finished) return;
		outputChars += data.length;
		outputItems++;
		if (outputChars > MAX_OUTPUT_CHARS || outputItems > MAX_OUTPUT_ITEMS) {
			const error = new RangeErrorCtor(
				"script output exceeded the limit of " + MAX_OUTPUT_CHARS + " characters or " + MAX_OUTPUT_ITEMS +
					" text(), image(), and console calls. Print a summary instead, or write large data to a file with a tool.",
			);
			done(false, describeError(error));
			throw error;
		}
		bridge("output", kind, data, opt(mimeType));
	}

	function outputText(value) {
		if (value === undefined || value === null || (typeof value !== "object" && typeof value !== "function")) return String(value);
		const json = stringify(value);
		return json === undefined ? String(value) : json;
	}

	function text(value) {
		let rendered;
		try {
			rendered = outputText(value);
		} catch (error) {
			throw new TypeErrorCtor(error instanceof ErrorCtor ? error.message : String(error));
		}
		output("text", rendered);
	}

	const IMAGE_EXPECTS = __IMAGE_EXPECTS__;
	function imageUrl(value) {
		if (typeof value === "string") return value;
		if (typeof value !== "object" || value === null || Array.isArray(value)) throw new TypeErrorCtor(IMAGE_EXPECTS);
		if (value.image_url !== undefined) {
			if (typeof value.image_url !== "string") throw new TypeErrorCtor(IMAGE_EXPECTS);
			return value.image_url;
		}
		if (typeof value.type !== "string") throw new TypeErrorCtor(IMAGE_EXPECTS);
		if (value.type !== "image") throw new TypeErrorCtor('image only accepts image blocks, got "' + value.type + '"');
		if (typeof value.data !== "string" || value.data === "") throw new TypeErrorCtor("image expected image block data");
		if (value.data.toLowerCase().startsWith("data:")) return value.data;
		return "data:;base64," + value.data;
	}

	const SIGNATURES = [
		["image/png", /^iVBORw0KGg/],
		["image/jpeg", /^[/]9j[/](?!9)/],
		["image/gif", /^R0lGOD[dl]h/],
		["image/webp", /^UklG.{8}RUJQ/],
	];

	function image(value) {
		const url = imageUrl(value);
		if (url === "") throw new TypeErrorCtor(IMAGE_EXPECTS);
		const colon = url.indexOf(":");
		const scheme = colon === -1 ? "" : url.slice(0, colon).toLowerCase();
		if (scheme === "http" || scheme === "https") {
			throw new TypeErrorCtor("remote image URLs are not supported in tool outputs. Pass a base64 data URI instead");
		}
		const comma = url.indexOf(",");
		const header = comma === -1 ? [] : url.slice(colon + 1, comma).split(";");
		if (scheme !== "data" || comma === -1 || header.slice(1).every((p) => p.toLowerCase() !== "base64")) {
			throw new TypeErrorCtor("invalid image output. Pass a base64 data URI instead");
		}
		const data = url.slice(comma + 1).replace(/\s+/g, "");
		if (data.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(data)) {
			throw new TypeErrorCtor("invalid image output. The image data is not valid base64 (truncated or corrupted?)");
		}
		const head = data.slice(0, 16);
		const signature = SIGNATURES.find(([, pattern]) => pattern.test(head));
		if (!signature) throw new TypeErrorCtor("invalid image output. The image data is not a PNG, JPEG, GIF, or WebP image");
		output("image", data, signature[0]);
	}

	function exit() {
		let writesJson;
		try {
			writesJson = serializeWrites();
		} catch (error) {
			done(false, describeError(error));
			throw EXIT;
		}
		done(true, undefined, writesJson);
		throw EXIT;
	}

	const console = {};
	for (const level of ["log", "info", "warn", "error", "debug"]) {
		console[level] = (...args) => output("console", args.map(format).join(" "));
	}
	Object.freeze(console);

	Object.defineProperty(globalThis, "tools", { value: toolsProxy, enumerable: true });
	Object.defineProperty(globalThis, "ALL_TOOLS", { value: allTools, enumerable: true });
	Object.defineProperty(globalThis, "console", { value: console, enumerable: true });
	Object.defineProperty(globalThis, "text", { value: text, enumerable: true });
	Object.defineProperty(globalThis, "image", { value: image, enumerable: true });
	Object.defineProperty(globalThis, "exit", { value: exit, enumerable: true });

	return {
		settle(id, ok, payload) {
			const entry = pending.get(id);
			if (!entry) return;
			pending.delete(id);
			if (!ok) {
				entry.reject(new ErrorCtor(payload));
				return;
			}
			let value;
			try {
				value = payload === "" ? undefined : parse(payload);
			} catch (error) {
				entry.reject(error);
				return;
			}
			entry.resolve(value);
		},
		run(fn) {
			let promise;
			try {
				promise = fn(toolsProxy, console);
			} catch (error) {
				if (error !== EXIT) done(false, describeError(error));
				return;
			}
			promiseThen.call(
				promise,
				(value) => {
					let json;
					try {
						json = serialize(value);
					} catch (error) {
						done(false, describeError(error));
						return;
					}
					done(true, json, serializeWrites());
				},
				(error) => {
					if (error !== EXIT) done(false, describeError(error));
				},
			);
		},
		stalled() {
			if (finished || pending.size > 0) return false;
			done(
				false,
				stringify({
					name: "Error",
					message:
						"The script is waiting on a promise that can never settle: no tool call is pending, and timers do not exist here.",
				}),
			);
			return true;
		},
	};
})
