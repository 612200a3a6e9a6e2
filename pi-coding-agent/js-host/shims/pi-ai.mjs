// pi-rs's @earendil-works/pi-ai for extensions: the helpers extensions use at run time.
import { randomBytes } from "node:crypto";
export { Type } from "./typebox.mjs";
import { Type } from "./typebox.mjs";

/** A string enum schema (`{type:"string", enum:[…]}`), as pi-ai's StringEnum. */
export function StringEnum(values, options) {
	return { type: "string", enum: [...values], ...(options ?? {}) };
}

/** A time-ordered UUID (version 7). */
export function uuidv7() {
	const bytes = randomBytes(16);
	const ms = BigInt(Date.now());
	for (let i = 0; i < 6; i++) bytes[i] = Number((ms >> BigInt(8 * (5 - i))) & 0xffn);
	bytes[6] = (bytes[6] & 0x0f) | 0x70;
	bytes[8] = (bytes[8] & 0x3f) | 0x80;
	const hex = bytes.toString("hex");
	return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const unavailable = (name) => () => {
	throw new Error(`${name} is not available to extensions run by pi-rs's JavaScript host`);
};

export const complete = unavailable("complete");
export const completeSimple = unavailable("completeSimple");
export const stream = unavailable("stream");
export const streamSimple = unavailable("streamSimple");
export const getModel = () => undefined;
export const getModels = () => [];
export const getProviders = () => [];

function contentText(content) {
	if (typeof content === "string") return content;
	return (content ?? []).filter((b) => b.type === "text").map((b) => b.text).join("\n");
}

/** Replays the system messages of a transcript into the current head (pi-ai's rule). */
export function getCurrentSystemMessage(messages) {
	const content = [];
	const sections = new Map();
	let timestamp;
	const tools = new Map();
	for (const message of messages ?? []) {
		if (message?.role !== "system") continue;
		timestamp ??= message.timestamp;
		const text = contentText(message.content);
		if (text.length > 0) content.push(text);
		for (const [name, value] of Object.entries(message.sections ?? {})) {
			if (value === null) sections.delete(name);
			else sections.set(name, value);
		}
		for (const tool of message.toolsAdded ?? []) tools.set(tool.name, tool);
		for (const ref of message.toolsRemoved ?? []) tools.delete(typeof ref === "string" ? ref : ref.name);
	}
	if (timestamp === undefined && tools.size === 0) return undefined;
	return {
		role: "system",
		content: content.join("\n\n"),
		...(sections.size > 0 ? { sections: Object.fromEntries(sections) } : {}),
		...(tools.size > 0 ? { toolsAdded: [...tools.values()] } : {}),
		timestamp: timestamp ?? 0,
	};
}

/** The tools in force after replaying the transcript's system messages. */
export function getCurrentTools(messages) {
	const tools = new Map();
	for (const message of messages ?? []) {
		if (message?.role !== "system") continue;
		for (const tool of message.toolsRemoved ?? []) tools.delete(typeof tool === "string" ? tool : tool.name);
		for (const tool of message.toolsAdded ?? []) tools.set(tool.name, tool);
	}
	return [...tools.values()];
}

/** The system prompt text after replaying the transcript's system messages. */
export function getCurrentSystemPrompt(messages) {
	const head = getCurrentSystemMessage(messages);
	if (!head) return "";
	const sections = Object.values(head.sections ?? {}).filter((v) => typeof v === "string" && v.length > 0);
	return [head.content, ...sections].filter((t) => t.length > 0).join("\n\n");
}

/** The transcript with one leading system message and no later ones. */
export function collapseSystemMessages(context) {
	const head = getCurrentSystemMessage(context.messages);
	const messages = (context.messages ?? []).filter((m) => m.role !== "system");
	return { messages: head ? [head, ...messages] : messages };
}

/** Fills `usage.cost` from the model's per-million rates (tiers by input size) and returns it. */
export function calculateCost(model, usage) {
	const inputTokens = usage.input + usage.cacheRead + usage.cacheWrite;
	let rates = model.cost;
	let threshold = -1;
	for (const tier of model.cost.tiers ?? []) {
		if (inputTokens > tier.inputTokensAbove && tier.inputTokensAbove > threshold) {
			rates = tier;
			threshold = tier.inputTokensAbove;
		}
	}
	const longWrite = usage.cacheWrite1h ?? 0;
	const shortWrite = usage.cacheWrite - longWrite;
	usage.cost.input = (rates.input / 1e6) * usage.input;
	usage.cost.output = (rates.output / 1e6) * usage.output;
	usage.cost.cacheRead = (rates.cacheRead / 1e6) * usage.cacheRead;
	usage.cost.cacheWrite = (rates.cacheWrite * shortWrite + rates.input * 2 * longWrite) / 1e6;
	usage.cost.total = usage.cost.input + usage.cost.output + usage.cost.cacheRead + usage.cost.cacheWrite;
	usage.cost.totalFromProvider = false;
	return usage.cost;
}

/** An async-iterable stream of events that ends with a final result. */
export class EventStream {
	constructor(isComplete, extractResult) {
		this.queue = [];
		this.waiting = [];
		this.done = false;
		this.isComplete = isComplete;
		this.extractResult = extractResult;
		this.finalResult = new Promise((resolve) => {
			this.resolveFinal = resolve;
		});
	}
	push(event) {
		if (this.done) return;
		if (this.isComplete(event)) {
			this.done = true;
			this.resolveFinal(this.extractResult(event));
		}
		const waiter = this.waiting.shift();
		if (waiter) waiter({ value: event, done: false });
		else this.queue.push(event);
	}
	end(result) {
		this.done = true;
		if (result !== undefined) this.resolveFinal(result);
		for (const waiter of this.waiting.splice(0)) waiter({ value: undefined, done: true });
	}
	async *[Symbol.asyncIterator]() {
		for (;;) {
			if (this.queue.length > 0) yield this.queue.shift();
			else if (this.done) return;
			else {
				const next = await new Promise((resolve) => this.waiting.push(resolve));
				if (next.done) return;
				yield next.value;
			}
		}
	}
	result() {
		return this.finalResult;
	}
}

/** pi-ai's stream of assistant message events (`done` / `error` end it). */
export function createAssistantMessageEventStream() {
	return new EventStream(
		(event) => event.type === "done" || event.type === "error",
		(event) => (event.type === "done" ? event.message : event.error),
	);
}

/** Closes what is open in partial JSON text so it parses (strings, arrays, objects). */
function closePartialJson(text) {
	const stack = [];
	let inString = false;
	let escaped = false;
	for (const ch of text) {
		if (inString) {
			if (escaped) escaped = false;
			else if (ch === "\\") escaped = true;
			else if (ch === '"') inString = false;
			continue;
		}
		if (ch === '"') inString = true;
		else if (ch === "{") stack.push("}");
		else if (ch === "[") stack.push("]");
		else if (ch === "}" || ch === "]") stack.pop();
	}
	let out = text;
	if (inString) out += escaped ? '\\"' : '"';
	out = out.replace(/[,:\s]+$/, "").replace(/,\s*"[^"]*"$/, "").replace(/\{\s*"[^"]*"$/, "{");
	return out + stack.reverse().join("");
}

/** Tool call arguments arriving in pieces: the arguments parsed so far after each piece. */
export class ToolCallArgumentsStream {
	#text = "";
	#arguments = {};
	get text() {
		return this.#text;
	}
	append(delta) {
		this.#text += delta;
		return this.#partial();
	}
	replace(text) {
		if (text.startsWith(this.#text)) {
			const delta = text.slice(this.#text.length);
			return { delta, arguments: delta === "" ? this.#partial() : this.append(delta) };
		}
		this.#text = "";
		return { delta: undefined, arguments: this.append(text) };
	}
	/** `{arguments}`, or `{arguments: {}, argumentsError}` when the text is not a JSON object. */
	finish() {
		const json = this.#text;
		if (!json.trim()) return { arguments: {} };
		try {
			const parsed = JSON.parse(json);
			if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error("Tool arguments must be a JSON object");
			return { arguments: parsed };
		} catch (error) {
			return { arguments: {}, argumentsError: `${error instanceof Error ? error.message : String(error)}\n\nReceived arguments:\n${json}` };
		}
	}
	#partial() {
		try {
			const value = JSON.parse(closePartialJson(this.#text));
			if (typeof value === "object" && value !== null && !Array.isArray(value) && JSON.stringify(value) !== JSON.stringify(this.#arguments)) {
				this.#arguments = value;
			}
		} catch {
			/* not parseable yet: the arguments so far stay */
		}
		return this.#arguments;
	}
}

const apiProviders = new Map();

/** Registers a stream implementation for an API name (pi-ai/compat). */
export function registerApiProvider(provider, sourceId) {
	apiProviders.set(provider.api, { provider, sourceId });
}

export function getApiProvider(api) {
	return apiProviders.get(api)?.provider;
}

const builtinApi = (api) => () => ({
	api,
	stream: unavailable(`${api} streaming`),
	streamSimple: unavailable(`${api} streaming`),
});

/** pi-ai/compat's built-in API implementations: pi-rs's providers run in pi-rs, not here. */
export const anthropicMessagesApi = builtinApi("anthropic-messages");
export const openAIResponsesApi = builtinApi("openai-responses");
export const openAICompletionsApi = builtinApi("openai-completions");
export const googleGenerativeAiApi = builtinApi("google-generative-ai");

export default { Type, StringEnum, uuidv7, getCurrentSystemMessage };
