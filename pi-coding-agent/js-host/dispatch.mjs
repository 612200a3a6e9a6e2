// Running what pi-rs asks for: one event handler, a tool, a command, a shortcut, a renderer.
import { extensions } from "./loader.mjs";
import { createContext, noteSnapshot, theme } from "./context.mjs";
import { rpc } from "./rpc.mjs";
import { syncModelRegistry } from "./model_registry.mjs";
import { syncSession } from "./session_manager.mjs";
import { toTree } from "./shims/pi-tui.mjs";
import "./shims/pi-tui/markdown-host.mjs";

const cancels = new Map();

function extensionOf(params) {
	const ext = extensions.get(params.extensionPath);
	if (!ext) throw new Error(`Extension not loaded in the JavaScript host: ${params.extensionPath}`);
	return ext;
}

function snapshotOf(params) {
	if (params.ctx?.state) rpc.updateState(params.ctx.state);
	if (params.ctx && "bound" in params.ctx) rpc.state.bound = params.ctx.bound;
	if (params.ctx?.flags) rpc.state.flags = params.ctx.flags;
	noteSnapshot(params.ctx);
	return params.ctx ?? {};
}

/** The snapshot, with `ctx.modelRegistry`'s copy brought up to date first. */
async function contextOf(params) {
	const snapshot = snapshotOf(params);
	await syncModelRegistry(snapshot);
	await syncSession(snapshot);
	return snapshot;
}

/** The streaming message as each `message_update` handler last saw it, by extension and handler:
 * pi-rs sends it whole once, then per delta only what changed (`patch`). */
const streaming = new Map();

/** pi's `message_update` event, rebuilt from a patch of the held message: `head` (the message's
 * other fields), `blocks` (`[index, block]` replaced whole) and `append` (the index of the text
 * or thinking block the event's delta is appended to). As pi's, `message` is a shallow copy and
 * the provider event's `partial` the held message itself. */
function updateEvent(params, payload) {
	const key = `${params.extensionPath}\0${params.handlerId}`;
	let message = streaming.get(key);
	if (!payload.patch) {
		message = payload.message;
		streaming.set(key, message);
	} else {
		if (!message) throw new Error("message_update: no message held for this patch");
		const { head, blocks, append } = payload.patch;
		if (head) {
			message = { ...head, content: message.content };
			streaming.set(key, message);
		}
		for (const [index, block] of blocks ?? []) message.content[index] = block;
		if (append !== undefined) {
			const block = message.content[append];
			const delta = payload.assistantMessageEvent.delta;
			if (block.type === "thinking") block.thinking += delta;
			else block.text += delta;
		}
	}
	// The provider's event as pi-ai emits it (`id` and `toolName` are pi's JSON output's additions).
	const { id, toolName, ...providerEvent } = payload.assistantMessageEvent;
	const assistantMessageEvent = providerEvent.type === "toolcall_start" ? providerEvent : payload.assistantMessageEvent;
	return { type: "message_update", message: { ...message }, assistantMessageEvent: { ...assistantMessageEvent, partial: message } };
}

/** The context of the message's first `message_update`, by extension and handler: a patched event
 * carries only the fields that change while a message streams, which the context reads through
 * the freshest snapshot (`noteSnapshot`), so the same context serves the whole message. */
const updateContexts = new Map();

function updateContext(ext, params) {
	snapshotOf(params);
	return updateContexts.get(`${ext.path}\0${params.handlerId}`) ?? createContext(ext.path, params.ctx ?? {});
}

/** The `message_update` handlers sent and not yet run: pi-rs does not wait for each before it
 * sends the next, so they run here one after the other, in the order they came. */
let updates = Promise.resolve();

/** Runs a `message_update` handler after those before it; its answer is its own outcome. */
export function queueUpdate(params) {
	const run = updates.then(() => runEvent(params));
	updates = run.catch(() => {});
	return run;
}

/** Runs the handler `handlerId` of an event; returns its result in pi's shape, `null` for none. */
export async function runEvent(params) {
	const ext = extensionOf(params);
	const entry = ext.handlerList.find((h) => h.id === params.handlerId);
	const handlers = entry ? [entry] : ext.handlers.get(params.event) ?? [];
	const payload = params.payload ?? { type: params.event };
	const event = params.event === "message_update" ? updateEvent(params, payload) : payload;
	const ctx = payload.patch ? updateContext(ext, params) : createContext(ext.path, await contextOf(params));
	if (params.event === "message_update" && !payload.patch) updateContexts.set(`${ext.path}\0${params.handlerId}`, ctx);
	const before = params.event === "context" ? JSON.stringify(event.messages) : undefined;
	const inputBefore = params.event === "tool_call" ? JSON.stringify(event.input) : undefined;
	const sectionsBefore = params.event === "before_agent_start" ? JSON.stringify(event.systemPromptOptions?.sections) : undefined;
	const headersBefore = params.event === "before_provider_headers" ? JSON.stringify(event.headers) : undefined;
	let result;
	for (const h of handlers) {
		result = await h.handler(event, ctx);
	}
	if (params.event === "context") {
		if (result && Array.isArray(result.messages)) return { messages: result.messages };
		if (JSON.stringify(event.messages) !== before) return { messages: event.messages };
		return null;
	}
	if (params.event === "tool_call") {
		const changed = JSON.stringify(event.input) !== inputBefore;
		if (!result && !changed) return null;
		return { ...(result ?? {}), ...(changed ? { input: event.input } : {}) };
	}
	if (params.event === "before_provider_headers") {
		// Handlers edit the headers in place; their return value is ignored (pi).
		return JSON.stringify(event.headers) !== headersBefore ? { headers: event.headers } : null;
	}
	if (params.event === "before_agent_start") {
		// Sections are edited in place (pi's systemPromptOptions.sections).
		const sections = event.systemPromptOptions?.sections;
		if (JSON.stringify(sections) !== sectionsBefore) return { ...(result ?? {}), sections };
	}
	return result === undefined ? null : result;
}

export async function runTool(params) {
	const ext = extensionOf(params);
	const tool = ext.tools.get(params.toolName);
	if (!tool) throw new Error(`Tool not found: ${params.toolName}`);
	// Tools run only in a bound session.
	rpc.state.bound = true;
	const controller = new AbortController();
	cancels.set(params.toolCallId, controller);
	const ctx = createContext(ext.path, await contextOf(params), false, controller.signal);
	// A request, so the result waits until every update has been delivered.
	const onUpdate = (partial) => {
		rpc.fire("tool.update", { extensionPath: ext.path, toolCallId: params.toolCallId, partial }, ext.path);
	};
	try {
		const args = typeof tool.prepareArguments === "function" ? tool.prepareArguments(params.args) : params.args;
		const result = await tool.execute(params.toolCallId, args, controller.signal, onUpdate, ctx);
		return {
			content: result?.content ?? [],
			details: result?.details ?? {},
			isError: Boolean(result?.isError),
			...(result?.terminate ? { terminate: true } : {}),
		};
	} finally {
		cancels.delete(params.toolCallId);
	}
}

export function cancelTool(toolCallId) {
	cancels.get(toolCallId)?.abort();
}

export async function runCommand(params) {
	const ext = extensionOf(params);
	const command = ext.commands.get(params.name);
	if (!command) throw new Error(`Command not found: ${params.name}`);
	await command.handler(params.args ?? "", createContext(ext.path, await contextOf(params), true));
	return null;
}

export async function runShortcut(params) {
	const ext = extensionOf(params);
	const shortcut = ext.shortcuts.get(params.shortcut);
	if (!shortcut) throw new Error(`Shortcut not found: ${params.shortcut}`);
	await shortcut.handler(createContext(ext.path, await contextOf(params)));
	return null;
}

/** A tool's renderers as this extension resolves them (pi's `resolveToolRenderers`): its
 * `registerToolRenderer` resolvers in order, each with `next`, then the tool's own `renderCall` /
 * `renderResult` when the extension defines the tool. */
function toolRenderersOf(ext, toolName) {
	const own = ext.tools.get(toolName);
	const base = own && (own.renderCall || own.renderResult)
		? { renderCall: own.renderCall?.bind(own), renderResult: own.renderResult?.bind(own) }
		: undefined;
	const at = (i) => (i >= ext.toolRenderers.length ? base : ext.toolRenderers[i](toolName, () => at(i + 1)));
	return at(0);
}

/** Calls a renderer: `{tree}` (the component as pi-rs draws it at `width`) or `null`. */
export function runRender(params) {
	const ext = extensionOf(params);
	const options = { expanded: Boolean(params.expanded), isPartial: Boolean(params.isPartial), outputPad: params.outputPad ?? 1 };
	let component;
	if (params.kind === "entry") {
		const renderer = ext.entryRenderers.get(params.customType);
		component = renderer?.(params.entry, options, theme);
	} else if (params.kind === "message") {
		const renderer = ext.messageRenderers.get(params.customType);
		component = renderer?.(params.message, options, theme);
	} else if (params.kind === "toolCall" || params.kind === "toolResult") {
		const renderers = toolRenderersOf(ext, params.toolName);
		const result = params.result ?? {};
		// pi's ToolRenderContext (no state kept between frames here).
		const context = {
			args: params.args ?? {},
			toolCallId: params.toolCallId ?? "",
			invalidate: () => {},
			lastComponent: undefined,
			state: {},
			cwd: params.ctx?.cwd ?? process.cwd(),
			executionStarted: params.kind === "toolResult",
			argsComplete: true,
			isPartial: options.isPartial,
			expanded: options.expanded,
			showImages: false,
			isError: Boolean(result.isError),
			durationMs: undefined,
			outputPad: options.outputPad,
		};
		if (params.kind === "toolCall") component = renderers?.renderCall?.(params.args ?? {}, theme, context);
		else component = renderers?.renderResult?.(result, options, theme, context);
	} else {
		throw new Error(`Unknown render kind: ${params.kind}`);
	}
	if (!component) return null;
	return { tree: toTree(component, params.width ?? 80) };
}
