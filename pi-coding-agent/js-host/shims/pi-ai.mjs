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

export default { Type, StringEnum, uuidv7, getCurrentSystemMessage };
