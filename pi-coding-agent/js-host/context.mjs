// `ctx` (pi's ExtensionContext and ExtensionCommandContext), `ctx.ui` and the theme, built from
// the snapshot pi-rs sends with every event, tool call and command.
import { rpc } from "./rpc.mjs";
import { addAutocompleteProvider, custom, editorBridge, scheduleSweep, setSnapshotHook, fillSlot, footerData, keybindings, namedTheme, noteUiSnapshot, onTerminalInput, register, statuses, tuiFor } from "./components.mjs";
import { modelRegistry } from "./model_registry.mjs";
import { forgetSetup, registerSetup, sessionManager, syncSession } from "./session_manager.mjs";
import { signalOf } from "./signals.mjs";

/** The theme extensions draw with. Colors are placeholders (OSC `pi:fg:<token>` / `pi:bg:<token>`)
 * that pi-rs replaces with the active theme's escape sequences; they have no width. */
export const theme = {
	fg: (token, text) => `\x1b]pi:fg:${token}\x07${text}\x1b[39m`,
	bg: (token, text) => `\x1b]pi:bg:${token}\x07${text}\x1b[49m`,
	bold: (text) => `\x1b[1m${text}\x1b[22m`,
	italic: (text) => `\x1b[3m${text}\x1b[23m`,
	underline: (text) => `\x1b[4m${text}\x1b[24m`,
	inverse: (text) => `\x1b[7m${text}\x1b[27m`,
	strikethrough: (text) => `\x1b[9m${text}\x1b[29m`,
	getFgAnsi: (token) => `\x1b]pi:fg:${token}\x07`,
	getBgAnsi: (token) => `\x1b]pi:bg:${token}\x07`,
	get name() {
		return rpc.state.themeName ?? "dark";
	},
};

/** The custom editor's factory (`getEditorComponent`). */
let editorFactory;

/** The snapshot of the latest event, merged over the older ones: a context kept by a component
 * (or a timer) reads the state pi-rs last sent, not the one of its creation. */
let latest = {};

/** Records the snapshot an event, tool call, command or component render came with. */
export function noteSnapshot(snapshot) {
	if (snapshot && typeof snapshot === "object") latest = { ...latest, ...snapshot };
	noteUiSnapshot(snapshot);
}
// A component's render cannot wait for the session's new entries: they are fetched after it,
// and the components are drawn again with them.
setSnapshotHook((snapshot) => {
	noteSnapshot(snapshot);
	if (snapshot?.session) syncThenSweep(snapshot, 0);
});

/** Fetches the session's new entries, then draws the components again; when pi-rs's session was
 * busy (a command still running), asks again a little later, at most 40 times. */
function syncThenSweep(snapshot, attempt) {
	void syncSession(snapshot).then((ok) => {
		if (ok === false && attempt < 40) setTimeout(() => syncThenSweep(snapshot, attempt + 1), 25);
		else scheduleSweep(true);
	});
}

/** A field of the freshest snapshot (`latest`), or of the context's own when it lacks it. */
function live(snapshot, key) {
	return key in latest ? latest[key] : snapshot[key];
}

function uiContext(extensionPath, snapshot) {
	// Components are drawn only by the interactive mode; elsewhere pi never calls their factories.
	const drawsComponents = Boolean(snapshot.hasUI) && snapshot.mode === "tui";
	const tui = tuiFor(extensionPath);
	const fire = (method, params) => rpc.fire(method, { extensionPath, ...params }, extensionPath);
	const ask = (method, params) => rpc.call(method, { extensionPath, ...params });
	const dialogOptions = (opts) => (opts ? { timeout: opts.timeout } : undefined);
	return {
		select: (title, options, opts) => ask("ui.select", { title, options, opts: dialogOptions(opts) }).then((v) => v ?? undefined),
		confirm: (title, message, opts) => ask("ui.confirm", { title, message, opts: dialogOptions(opts) }).then(Boolean),
		input: (title, placeholder, opts) => ask("ui.input", { title, placeholder, opts: dialogOptions(opts) }).then((v) => v ?? undefined),
		editor: (title, prefill) => ask("ui.editor", { title, prefill }).then((v) => v ?? undefined),
		notify: (message, type) => void fire("ui.notify", { message, type: type ?? "info" }),
		onTerminalInput: (handler) => (drawsComponents && typeof handler === "function" ? onTerminalInput(extensionPath, handler) : () => {}),
		setStatus: (key, text) => {
			if (text === undefined || text === null) statuses.delete(key);
			else statuses.set(key, String(text));
			void fire("ui.setStatus", { key, text });
		},
		setWorkingMessage: (message) => void fire("ui.setWorkingMessage", { message }),
		setWorkingVisible: (visible) => void fire("ui.setWorkingVisible", { visible }),
		setWorkingIndicator: (options) => void fire("ui.setWorkingIndicator", { options }),
		setHiddenThinkingLabel: (label) => void fire("ui.setHiddenThinkingLabel", { label }),
		setWidget: (key, content, options) => {
			if (typeof content === "function" && drawsComponents) {
				const id = register(content(tui, theme), extensionPath);
				fillSlot(`widget:${key}`, id);
				void fire("ui.setWidget", { key, componentId: id, placement: options?.placement });
				return;
			}
			fillSlot(`widget:${key}`, undefined);
			const lines = Array.isArray(content) ? content : undefined;
			void fire("ui.setWidget", { key, content: lines, placement: options?.placement });
		},
		setFooter: (factory) => {
			if (!drawsComponents) return;
			const id = typeof factory === "function" ? register(factory(tui, theme, footerData(snapshot.cwd ?? process.cwd())), extensionPath) : undefined;
			fillSlot("footer", id);
			void fire("ui.setFooter", { componentId: id ?? null });
		},
		setHeader: (factory) => {
			if (!drawsComponents) return;
			const id = typeof factory === "function" ? register(factory(tui, theme), extensionPath) : undefined;
			fillSlot("header", id);
			void fire("ui.setHeader", { componentId: id ?? null });
		},
		setTitle: (title) => void fire("ui.setTitle", { title }),
		custom: (factory, options) => (drawsComponents ? custom(extensionPath, theme, factory, options) : Promise.resolve(undefined)),
		pasteToEditor: (text) => void fire("ui.pasteToEditor", { text }),
		setEditorText: (text) => void fire("ui.setEditorText", { text }),
		getEditorText: () => live(snapshot, "editorText") ?? "",
		addAutocompleteProvider: (factory) => {
			if (drawsComponents && typeof factory === "function") addAutocompleteProvider(extensionPath, factory);
		},
		setEditorComponent: (factory) => {
			if (!drawsComponents) return;
			editorFactory = typeof factory === "function" ? factory : undefined;
			if (!editorFactory) {
				fillSlot("editor", undefined);
				void fire("ui.setEditorComponent", { componentId: null });
				return;
			}
			const editorTheme = { borderColor: (text) => theme.fg("borderMuted", text), selectList: {} };
			const component = editorFactory(tui, editorTheme, keybindings);
			if (!component.__editorBridge) editorBridge(component);
			const id = register(component, extensionPath);
			fillSlot("editor", id);
			void fire("ui.setEditorComponent", { componentId: id });
		},
		getEditorComponent: () => editorFactory,
		get theme() {
			return theme;
		},
		getAllThemes: () => live(snapshot, "themes") ?? [],
		getTheme: (name) => namedTheme(name),
		setTheme: (name) => {
			// pi answers a failure ({success: false}) to the caller and reports nothing; the
			// answer here cannot wait for pi-rs, so a failure is dropped, not reported.
			void rpc.quiet("ui.setTheme", { extensionPath, name: typeof name === "string" ? name : name?.name });
			return { success: true };
		},
		getToolsExpanded: () => Boolean(live(snapshot, "toolsExpanded")),
		setToolsExpanded: (expanded) => void fire("ui.setToolsExpanded", { expanded }),
	};
}

/** The context handed to a handler; `command` adds the command context's session controls. */
export function createContext(extensionPath, snapshot = {}, command = false, signal = undefined) {
	const call = (method, params) => rpc.call(method, { extensionPath, ...params });
	const fire = (method, params) => rpc.fire(method, { extensionPath, ...params }, extensionPath);
	const ctx = {
		ui: uiContext(extensionPath, snapshot),
		get mode() {
			return live(snapshot, "mode") ?? "print";
		},
		get hasUI() {
			return Boolean(live(snapshot, "hasUI"));
		},
		get cwd() {
			return live(snapshot, "cwd") ?? process.cwd();
		},
		sessionManager,
		modelRegistry: modelRegistry(extensionPath),
		get model() {
			return live(snapshot, "model") ?? undefined;
		},
		get scopedModels() {
			return live(snapshot, "scopedModels") ?? [];
		},
		get thinkingLevel() {
			return rpc.state.thinkingLevel;
		},
		isIdle: () => live(snapshot, "isIdle") ?? true,
		isProjectTrusted: () => Boolean(live(snapshot, "projectTrusted")),
		get signal() {
			// pi's `ctx.signal` is the agent's signal of the current run (a tool's own `signal`
			// when the snapshot names no run).
			return signalOf(live(snapshot, "signal")) ?? signal;
		},
		abort: () => void fire("ctx.abort", {}),
		hasPendingMessages: () => Boolean(live(snapshot, "hasPendingMessages")),
		shutdown: () => void fire("ctx.shutdown", {}),
		getContextUsage: () => live(snapshot, "contextUsage") ?? undefined,
		compact: (options) => void fire("ctx.compact", { customInstructions: options?.customInstructions }),
		getSystemPrompt: () => live(snapshot, "systemPrompt") ?? "",
		// pi's normalized options always have `customPrompt` and `forceSystemPrompt` (maybe undefined).
		getSystemPromptOptions: () => ({ customPrompt: undefined, forceSystemPrompt: undefined, ...structuredClone(live(snapshot, "systemPromptOptions") ?? {}) }),
	};
	if (command) {
		// After a replacement, `withSession(ctx)` gets a context of the new session (pi's
		// ReplacedSessionContext: its sendMessage / sendUserMessage resolve when delivered).
		const replaced = async (result, options) => {
			const outcome = result ?? { cancelled: false };
			if (!outcome.cancelled && typeof options?.withSession === "function") {
				const snapshotNow = await call("ctx.snapshot", {});
				noteSnapshot(snapshotNow);
				await syncSession(snapshotNow);
				const fresh = createContext(extensionPath, snapshotNow, true);
				fresh.sendMessage = (message, opts) => call("pi.sendMessage", { message, options: opts }).then(() => undefined);
				fresh.sendUserMessage = (content, opts) => call("pi.sendUserMessage", { content, options: opts }).then(() => undefined);
				await options.withSession(fresh);
			}
			return outcome;
		};
		Object.assign(ctx, {
			waitForIdle: () => call("ctx.waitForIdle", {}).then(() => undefined),
			newSession: async (options) => {
				// pi runs `setup` on the new session's manager once it is installed, before its
				// `session_start`: pi-rs asks for it then (`session.setup`) and replays its appends.
				const setupId = typeof options?.setup === "function" ? registerSetup(options.setup) : undefined;
				try {
					const result = await call("ctx.newSession", { parentSession: options?.parentSession, setupId });
					return await replaced(result, options);
				} finally {
					if (setupId !== undefined) forgetSetup(setupId);
				}
			},
			fork: (entryId, options) => call("ctx.fork", { entryId, position: options?.position }).then((r) => replaced(r, options)),
			navigateTree: (targetId, options) =>
				call("ctx.navigateTree", {
					targetId,
					summarize: options?.summarize,
					customInstructions: options?.customInstructions,
					replaceInstructions: options?.replaceInstructions,
					label: options?.label,
				}).then((r) => r ?? { cancelled: false }),
			switchSession: (sessionPath, options) => call("ctx.switchSession", { sessionPath }).then((r) => replaced(r, options)),
			reload: () => call("ctx.reload", {}).then(() => undefined),
		});
	}
	return ctx;
}
