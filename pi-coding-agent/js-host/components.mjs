// The component bridge: components an extension hands to pi's UI (`ctx.ui.custom`, component
// widgets, `setFooter`, `setHeader`, `setEditorComponent`, `tui.showOverlay`) stay here, in the
// extension's process; pi-rs draws them through a proxy that asks for their lines at the width it
// draws them (`component.render`), delivers keys (`component.input`) and the focus
// (`component.focus`), and drops them (`component.dispose`). Lines that change afterwards are
// pushed (`sweep`); `tui.requestRender()` tells pi-rs to draw again (`ui.requestRender`). Raw
// input listeners (`terminal.input`) and completion providers (`autocomplete.suggest`) are
// answered here too.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, statSync, watch } from "node:fs";
import * as path from "node:path";
import { errorMessage, rpc } from "./rpc.mjs";
import { dispatchMouseEvent, matchesKey, retargetMouseEvent } from "./shims/pi-tui.mjs";

const components = new Map();
/** The component in each keyed slot (`widget:<key>`, `footer`, `header`). */
const slots = new Map();
let nextId = 1;

function notify(method, params) {
	rpc.send({ method, params });
}

/** The overlays shown through `tui.showOverlay` or `ctx.ui.custom({overlay})`, by key. */
const overlays = new Map();
/** Whether each component has focus, as pi-rs last told (`component.focus`). */
const focusOf = new Map();

/** The terminal's size as pi-rs last drew the overlays (`overlay.visible` carries it). */
let terminalSize;

/** pi-tui's `isOverlayVisible` for an overlay's state at the terminal's size: not hidden, and its
 * `visible(columns, rows)` option (read each time, as pi reads it every frame) agrees. */
function overlayShows(state, size = terminalSize) {
	if (state.gone || state.hidden) return false;
	if (typeof state.options?.visible !== "function" || !size) return true;
	try {
		return Boolean(state.options.visible(size.columns, size.rows));
	} catch {
		return false;
	}
}

/** `overlay.visible`: pi-rs draws a frame at `columns` x `rows` and asks whether the overlay
 * `key` shows (its `visible` option). */
export function overlayVisible(params) {
	terminalSize = { columns: Number(params.columns) || 80, rows: Number(params.rows) || 24 };
	const state = overlays.get(params.key);
	if (!state) return { visible: true };
	state.answered = { ...terminalSize, visible: overlayShows({ ...state, hidden: false }) };
	return { visible: state.answered.visible };
}

/** Visibility answers that changed since pi-rs asked (extension state read by `visible`). */
function sweepVisibility() {
	let changed = false;
	for (const [key, state] of overlays) {
		const last = state.answered;
		if (!last || typeof state.options?.visible !== "function") continue;
		const visible = overlayShows({ ...state, hidden: false }, last);
		if (visible === last.visible) continue;
		last.visible = visible;
		changed = true;
		notify("ui.overlayVisible", { key, columns: last.columns, rows: last.rows, visible });
	}
	return changed;
}

function sizeOf(value, reference) {
	if (typeof value === "number") return value;
	const m = typeof value === "string" ? /^(\d+(?:\.\d+)?)%$/.exec(value) : null;
	return m ? Math.floor((reference * Number(m[1])) / 100) : undefined;
}

/** pi-tui's `resolveOverlayLayout`: where an overlay of `height` lines sits. */
export function overlayLayout(options, height, columns, rows) {
	const o = options ?? {};
	const m = typeof o.margin === "number" ? { top: o.margin, right: o.margin, bottom: o.margin, left: o.margin } : (o.margin ?? {});
	const [mt, mr, mb, ml] = [m.top, m.right, m.bottom, m.left].map((v) => Math.max(0, Math.floor(v ?? 0)));
	const availW = Math.max(1, columns - ml - mr);
	const availH = Math.max(1, rows - mt - mb);
	let width = sizeOf(o.width, columns) ?? Math.min(80, availW);
	if (typeof o.minWidth === "number") width = Math.max(width, o.minWidth);
	width = Math.max(1, Math.min(width, availW));
	const maxHeight = o.maxHeight === undefined ? undefined : Math.max(1, Math.min(sizeOf(o.maxHeight, rows) ?? availH, availH));
	const effH = maxHeight === undefined ? height : Math.min(height, maxHeight);
	const anchor = o.anchor ?? "center";
	const rowOf = () => (anchor.startsWith("top") ? mt : anchor.startsWith("bottom") ? mt + availH - effH : mt + Math.floor((availH - effH) / 2));
	const colOf = () =>
		anchor.endsWith("left") ? ml : anchor.endsWith("right") ? ml + availW - width : ml + Math.floor((availW - width) / 2);
	const pct = (v) => (typeof v === "string" && v.endsWith("%") ? Number(v.slice(0, -1)) : undefined);
	let row = typeof o.row === "number" ? o.row : pct(o.row) !== undefined ? mt + Math.floor((Math.max(0, availH - effH) * pct(o.row)) / 100) : rowOf();
	let col = typeof o.col === "number" ? o.col : pct(o.col) !== undefined ? ml + Math.floor((Math.max(0, availW - width) * pct(o.col)) / 100) : colOf();
	row += o.offsetY ?? 0;
	col += o.offsetX ?? 0;
	row = Math.max(mt, Math.min(row, rows - mb - effH));
	col = Math.max(ml, Math.min(col, columns - mr - width));
	return { row: Math.max(0, row), col: Math.max(0, col), width, height: effH };
}

/** pi-tui's OverlayHandle for the overlay `key` (component `id`), shown with `options`. */
function overlayHandle(key, id, options) {
	const state = { hidden: false, gone: false, options };
	overlays.set(key, state);
	const op = (name, extra) => notify("ui.overlay", { key, op: name, ...extra });
	return {
		hide() {
			if (state.gone) return;
			state.gone = true;
			overlays.delete(key);
			op("hide");
			if (!String(key).startsWith("custom:")) dispose(id);
		},
		setHidden(hidden) {
			if (state.gone || state.hidden === Boolean(hidden)) return;
			state.hidden = Boolean(hidden);
			op("setHidden", { hidden: state.hidden });
		},
		isHidden: () => state.hidden,
		focus() {
			if (state.gone || state.hidden) return;
			op("focus");
		},
		unfocus() {
			if (state.gone) return;
			op("unfocus");
		},
		isFocused: () => !state.gone && Boolean(focusOf.get(id)),
		// The rectangle of the last frame: the lines last drawn, placed at the terminal's size.
		getBounds() {
			const drawn = lastRender.get(id);
			if (!drawn || !terminalSize || !overlayShows(state)) return undefined;
			return overlayLayout(state.options, drawn.count, terminalSize.columns, terminalSize.rows);
		},
	};
}

/** The `tui` handed to an extension's factories (pi's TUI, what extensions use of it). */
export function tuiFor(extensionPath) {
	return {
		requestRender: () => {
			sweep();
			notify("ui.requestRender", {});
		},
		get terminal() {
			return { columns: terminalSize?.columns ?? rpc.state.columns ?? 80, rows: terminalSize?.rows ?? rpc.state.rows ?? 24 };
		},
		showOverlay(component, options) {
			const id = register(component, extensionPath);
			const key = `overlay:${id}`;
			const overlayOptions = overlayOptionsOf(options, component);
			const handle = overlayHandle(key, id, options);
			notify("ui.showOverlay", { extensionPath, id, key, overlayOptions });
			return handle;
		},
		hideOverlay() {
			const last = [...overlays.keys()].pop();
			if (last !== undefined) notify("ui.overlay", { key: last, op: "hide" });
		},
		hasOverlay: () => overlays.size > 0,
		setFocus() {},
		start() {},
		stop() {},
	};
}

/** The `tui` of factories outside any extension. */
export const tui = tuiFor("");

/** The keys of every action as pi-rs has them (its keybindings config), from the snapshots of
 * commands and `session_*` events. */
let keysById = {};
/** The themes pi-rs can load, each theme's escape sequences by token (`ctx.ui.getTheme`). */
let themeColors = {};

/** Takes what pi-rs sent of its UI with a snapshot: the keybindings and the themes. */
export function noteUiSnapshot(snapshot) {
	if (snapshot?.keybindings && typeof snapshot.keybindings === "object") keysById = snapshot.keybindings;
	if (snapshot?.themeColors && typeof snapshot.themeColors === "object") themeColors = snapshot.themeColors;
}

/** pi's KeybindingsManager (the `keybindings` argument of `custom()` factories): pi-tui's and the
 * application's action ids, with the keys of pi-rs's keybindings config. */
export const keybindings = {
	matches: (data, id) => (keysById[id] ?? []).some((key) => matchesKey(data, key)),
	getKeys: (id) => [...(keysById[id] ?? [])],
	getResolvedBindings: () =>
		Object.fromEntries(Object.entries(keysById).map(([id, keys]) => [id, keys.length === 1 ? keys[0] : [...keys]])),
	getEffectiveConfig() {
		return this.getResolvedBindings();
	},
};

/** pi's `getThemeByName`: the named theme as pi's Theme draws (real escape sequences), or
 * `undefined` when pi-rs cannot load it. */
export function namedTheme(name) {
	const colors = themeColors[name];
	if (!colors) return undefined;
	const pair = (map, token) => {
		const value = map?.[token];
		if (!Array.isArray(value)) throw new Error(`Unknown theme color: ${token}`);
		return value;
	};
	return {
		name: colors.name ?? name,
		fg: (token, text) => {
			const [open, close] = pair(colors.fg, token);
			return `${open}${text}${close}`;
		},
		bg: (token, text) => {
			const [open, close] = pair(colors.bg, token);
			return `${open}${text}${close}`;
		},
		bold: (text) => `\x1b[1m${text}\x1b[22m`,
		italic: (text) => `\x1b[3m${text}\x1b[23m`,
		underline: (text) => `\x1b[4m${text}\x1b[24m`,
		inverse: (text) => `\x1b[7m${text}\x1b[27m`,
		strikethrough: (text) => `\x1b[9m${text}\x1b[29m`,
		getFgAnsi: (token) => pair(colors.fg, token)[0],
		getBgAnsi: (token) => pair(colors.bg, token)[0],
	};
}

/** Keeps `component` and returns the id pi-rs names it by. */
export function register(component, extensionPath) {
	const id = nextId++;
	components.set(id, { component, extensionPath });
	return id;
}

/** Drops a component, calling its `dispose` (errors ignored, as pi). */
export function dispose(id) {
	const entry = components.get(id);
	if (!entry) return;
	components.delete(id);
	lastRender.delete(id);
	focusOf.delete(id);
	try {
		entry.component?.dispose?.();
	} catch {
		/* pi ignores dispose errors */
	}
}

/** Puts component `id` (or nothing) into a keyed slot, dropping the one there. */
export function fillSlot(slot, id) {
	const old = slots.get(slot);
	if (old !== undefined && old !== id) dispose(old);
	if (id === undefined) slots.delete(slot);
	else slots.set(slot, id);
}

/** Records a fresh context snapshot (set by context.mjs, which imports this module). */
let noteSnapshotHook;
export function setSnapshotHook(hook) {
	noteSnapshotHook = hook;
}

/** The width each component was last drawn at and the answer sent then (`sweep` compares). */
const lastRender = new Map();

function linesOf(entry, width, base) {
	if (base !== undefined && entry.component.__editorBridge) entry.component.__editorBridge.base = base;
	let lines;
	try {
		lines = entry.component.render(width);
	} catch (error) {
		return { lines: [], error: `render() threw: ${errorMessage(error)}` };
	}
	if (!Array.isArray(lines)) return { lines: [], error: "render() did not return an array of lines" };
	let error;
	const out = lines.map((line, i) => {
		if (typeof line === "string") return line;
		error ??= `render() returned a non-string line (line ${i}: ${line === null ? "null" : typeof line})`;
		return line === undefined || line === null ? "" : String(line);
	});
	// pi-tui's capturesViewportInput: page keys go to the component, not to the transcript.
	const captures = entry.component.capturesViewportInput ? { capturesViewportInput: true } : {};
	// pi-tui's handleMouse: pi-rs hands the component its mouse events (`component.mouse`).
	if (typeof entry.component.handleMouse === "function") captures.handlesMouse = true;
	return error ? { lines: out, error, ...captures } : { lines: out, ...captures };
}

/** `component.render`: the lines at `width`, with what was wrong with them in `error`. An editor
 * gets the built-in editor's lines (`base`, what its `super.render` returns) and text. */
export function renderComponent(params) {
	const entry = components.get(params.id);
	if (!entry) return { lines: [] };
	if (params.footerData) footerState(params.footerData);
	if (params.ctx) {
		if (params.ctx.state) rpc.updateState(params.ctx.state);
		noteSnapshotHook?.(params.ctx);
	}
	if (params.text !== undefined && entry.component.__editorBridge) entry.component.__editorBridge.text = params.text;
	const answer = linesOf(entry, params.width, params.base);
	lastRender.set(params.id, { width: params.width, json: JSON.stringify(answer), count: answer.lines.length });
	return answer;
}

let sweepQueued = false;
const realSetImmediate = globalThis.setImmediate;

/** pi's TUI calls `render(width)` on every frame, so a component's new state shows on the next
 * frame whatever changed it. pi-rs keeps the lines instead: after extension code ran (a timer, a
 * message, `requestRender`) every drawn component renders again here and only lines that changed
 * cross to pi-rs (`ui.componentLines`), which draws them with its next frame. Nothing crosses
 * while nothing changes. */
export function sweep() {
	sweepQueued = false;
	const frame = frameAfterSweep;
	frameAfterSweep = false;
	let pushed = false;
	for (const [id, last] of lastRender) {
		const entry = components.get(id);
		if (!entry) continue;
		const answer = linesOf(entry, last.width);
		const json = JSON.stringify(answer);
		if (json === last.json) continue;
		last.json = json;
		last.count = answer.lines.length;
		pushed = true;
		notify("ui.componentLines", { id, width: last.width, ...answer });
	}
	if (sweepVisibility() || (frame && pushed)) notify("ui.requestRender", {});
}

/** Whether the next sweep asks for a frame when lines changed (pi-rs moved the focus: pi's
 * `setFocus` draws a frame). */
let frameAfterSweep = false;


/** Runs `sweep` once after the current extension code finished; with `frame`, lines that changed
 * ask for a frame (the session's new entries arrived after the frame that asked for them, which pi
 * would have drawn with them). */
export function scheduleSweep(frame = false) {
	if (frame) frameAfterSweep = true;
	if (sweepQueued || (lastRender.size === 0 && overlays.size === 0)) return;
	sweepQueued = true;
	realSetImmediate(sweep);
}

// Timers are how components change on their own: each callback is followed by a sweep.
for (const name of ["setTimeout", "setInterval", "setImmediate"]) {
	const original = globalThis[name];
	const wrapped = (callback, ...rest) =>
		typeof callback === "function"
			? original(
					(...args) => {
						try {
							return callback(...args);
						} finally {
							scheduleSweep();
						}
					},
					...rest,
				)
			: original(callback, ...rest);
	// `util.promisify(setTimeout)` and friends keep working.
	Object.defineProperties(wrapped, Object.getOwnPropertyDescriptors(original));
	globalThis[name] = wrapped;
}

/** `component.input`: a key for the component's `handleInput`. A custom editor answers with the
 * keys it passed on to the built-in editor (its `super.handleInput` calls). */
export function inputComponent(params) {
	const entry = components.get(params.id);
	if (!entry || typeof entry.component.handleInput !== "function") return null;
	const bridge = entry.component.__editorBridge;
	if (bridge) {
		if (params.text !== undefined) bridge.text = params.text;
		bridge.forward = [];
	}
	entry.component.handleInput(params.data);
	if (!bridge) return null;
	const forward = bridge.forward;
	bridge.forward = undefined;
	return { forward };
}

/** What a custom editor (`ctx.ui.setEditorComponent`) of the shim's `CustomEditor` sees of
 * pi-rs's built-in editor: `super.handleInput` keys collect in `forward` while pi-rs waits for
 * them, `super.render` is the built-in editor's lines (`base`), `getText` its text (updated at
 * every call, and guessed for plain typing in between). */
export function editorBridge(component) {
	const bridge = {
		forward: undefined,
		base: [],
		text: "",
		setText: (text) => {
			bridge.text = String(text);
			notify("ui.setEditorText", { text: bridge.text });
		},
	};
	component.__editorBridge = bridge;
	return bridge;
}

/** `component.mouse`: a mouse event (pi-tui's `TuiMouseEvent`, relative to the component) for
 * the component's `handleMouse`; the answer is pi-tui's result (`handled`, `capture`, `focus`,
 * `render`), or null when it did not use the event. */
export function mouseComponent(params) {
	const entry = components.get(params.id);
	if (!entry || typeof entry.component.handleMouse !== "function") return null;
	// The rest of a gesture (`target`) goes where its press went, as pi-tui's capture does.
	const target = params.target ? mouseTargets.get(params.id) : undefined;
	const result = target
		? dispatchMouseEvent(target.component, retargetMouseEvent(params.event, target))
		: dispatchMouseEvent(entry.component, params.event);
	if (!result) return null;
	if (!params.target) mouseTargets.set(params.id, result.target);
	const flag = (name) => (result[name] === true ? { [name]: true } : {});
	const render = typeof result.render === "boolean" ? { render: result.render } : {};
	return { ...flag("handled"), ...flag("capture"), ...flag("focus"), ...render };
}

/** The component inside each drawn component that took the last press, for the rest of the gesture. */
const mouseTargets = new Map();

/** `component.focus`: pi-tui's Focusable (`focused`) as pi-rs moves the focus. */
export function focusComponent(params) {
	const entry = components.get(params.id);
	if (!entry) return null;
	focusOf.set(params.id, Boolean(params.focused));
	if ("focused" in entry.component) entry.component.focused = Boolean(params.focused);
	frameAfterSweep = true;
	scheduleSweep();
	return null;
}

/** `component.invalidate`: the theme changed. */
export function invalidateComponent(params) {
	components.get(params.id)?.component.invalidate?.();
	return null;
}

/** `ctx.ui.onTerminalInput` handlers, in the order added. */
const inputHandlers = [];

/** pi's `onTerminalInput`: the handler sees raw input before anything else; returns the
 * unsubscribe function. */
export function onTerminalInput(extensionPath, handler) {
	const entry = { extensionPath, handler };
	inputHandlers.push(entry);
	if (inputHandlers.length === 1) notify("ui.terminalInput", { active: true });
	return () => {
		const at = inputHandlers.indexOf(entry);
		if (at < 0) return;
		inputHandlers.splice(at, 1);
		if (inputHandlers.length === 0) notify("ui.terminalInput", { active: false });
	};
}

/** `terminal.input`: runs the handlers as pi-tui's input listeners: `{consume}` stops, `{data}`
 * replaces what the next one (and pi) sees; empty data at the end stops. */
export function terminalInput(params) {
	let data = String(params.data ?? "");
	for (const { extensionPath, handler } of [...inputHandlers]) {
		let result;
		try {
			result = handler(data);
		} catch (error) {
			notify("pi.reportError", { extensionPath, event: "terminal_input", error: errorMessage(error) });
			continue;
		}
		if (result?.consume) return { consume: true };
		if (result?.data !== undefined) data = String(result.data);
	}
	return data.length === 0 ? { consume: true } : { data };
}

/** pi's `findGitPaths`: the repository's HEAD file, walking up from `cwd` (worktrees too). */
function findGitPaths(cwd) {
	let dir = cwd;
	for (;;) {
		const gitPath = path.join(dir, ".git");
		if (existsSync(gitPath)) {
			try {
				const stat = statSync(gitPath);
				if (stat.isFile()) {
					const content = readFileSync(gitPath, "utf8").trim();
					if (!content.startsWith("gitdir: ")) return null;
					const headPath = path.join(path.resolve(dir, content.slice(8).trim()), "HEAD");
					return existsSync(headPath) ? { repoDir: dir, headPath } : null;
				}
				const headPath = path.join(gitPath, "HEAD");
				return existsSync(headPath) ? { repoDir: dir, headPath } : null;
			} catch {
				return null;
			}
		}
		const up = path.dirname(dir);
		if (up === dir) return null;
		dir = up;
	}
}

/** The branch HEAD names: `null` outside a repository, `"detached"` on a detached HEAD. */
function readBranch(gitPaths) {
	if (!gitPaths) return null;
	try {
		const content = readFileSync(gitPaths.headPath, "utf8").trim();
		if (!content.startsWith("ref: refs/heads/")) return "detached";
		const branch = content.slice(16);
		if (branch !== ".invalid") return branch;
		const result = spawnSync("git", ["--no-optional-locks", "symbolic-ref", "--quiet", "--short", "HEAD"], {
			cwd: gitPaths.repoDir,
			encoding: "utf8",
			stdio: ["ignore", "pipe", "ignore"],
		});
		return (result.status === 0 ? result.stdout.trim() : "") || "detached";
	} catch {
		return null;
	}
}

/** Every extension's status texts (`ctx.ui.setStatus`), as pi-rs's footer has them; kept in
 * order of their first setting, as pi's Map. */
export const statuses = new Map();
const footerShared = { providerCount: 0 };

/** What pi-rs sends with a footer's render: the statuses of every extension and the number of
 * providers with models. */
function footerState(data) {
	if (Array.isArray(data.statuses)) {
		statuses.clear();
		for (const [key, text] of data.statuses) statuses.set(key, text);
	}
	if (typeof data.providerCount === "number") footerShared.providerCount = data.providerCount;
}

const WATCH_DEBOUNCE_MS = 500;

/** pi's ReadonlyFooterDataProvider (`FooterDataProvider`): the git branch, read once and again
 * when HEAD changes (watched, 500 ms debounce, then `onBranchChange` callbacks), the extension
 * statuses and the available provider count. */
export function footerData(cwd) {
	const gitPaths = findGitPaths(cwd);
	const callbacks = new Set();
	let branch;
	let timer = null;
	let watcher = null;
	const refresh = () => {
		timer = null;
		const next = readBranch(gitPaths);
		if (branch !== undefined && next !== branch) {
			branch = next;
			for (const cb of [...callbacks]) cb();
			return;
		}
		branch = next;
	};
	if (gitPaths) {
		try {
			watcher = watch(path.dirname(gitPaths.headPath), (_type, file) => {
				if (file && file !== "HEAD") return;
				if (!timer) timer = setTimeout(refresh, WATCH_DEBOUNCE_MS);
			});
			watcher.unref?.();
			watcher.on("error", () => {});
		} catch {
			watcher = null;
		}
	}
	return {
		getGitBranch: () => {
			if (branch === undefined) branch = readBranch(gitPaths);
			return branch;
		},
		getExtensionStatuses: () => statuses,
		getAvailableProviderCount: () => footerShared.providerCount,
		onBranchChange: (callback) => {
			callbacks.add(callback);
			return () => callbacks.delete(callback);
		},
		dispose: () => {
			watcher?.close();
			callbacks.clear();
		},
	};
}

function sizeValue(v) {
	if (typeof v === "number") return v;
	if (typeof v === "string" && /^\d+(\.\d+)?%$/.test(v)) return v;
	return undefined;
}

/** pi's `resolveOptions` of `custom()`: the `overlayOptions`, a function called once (when the
 * overlay is shown, as pi does), or the component's `width`. */
function customOverlayOptions(options, component) {
	let opts = options?.overlayOptions;
	if (typeof opts === "function") opts = opts();
	if (opts) return opts;
	return component?.width ? { width: component.width } : undefined;
}

/** Overlay options as they cross to pi-rs; `visible` stays here (`overlay.visible`). */
export function overlayOptionsOf(opts, component) {
	if (!opts) return component?.width ? { width: component.width } : undefined;
	const margin = typeof opts.margin === "number" ? { top: opts.margin, right: opts.margin, bottom: opts.margin, left: opts.margin } : opts.margin;
	return {
		width: sizeValue(opts.width),
		minWidth: opts.minWidth,
		maxHeight: sizeValue(opts.maxHeight),
		anchor: opts.anchor,
		offsetX: opts.offsetX,
		offsetY: opts.offsetY,
		row: sizeValue(opts.row),
		col: sizeValue(opts.col),
		margin,
		nonCapturing: opts.nonCapturing,
		hasVisible: typeof opts.visible === "function",
	};
}

/** pi's `ctx.ui.custom(factory, options)`: resolves with what the component passes to `done`;
 * `undefined` when pi-rs closes it first (the session ended). */
export function custom(extensionPath, theme, factory, options) {
	return new Promise((resolve, reject) => {
		let closed = false;
		let id;
		const close = (result) => {
			if (closed) return;
			closed = true;
			if (id !== undefined) {
				overlays.delete(`custom:${id}`);
				notify("ui.customDone", { extensionPath, id });
				dispose(id);
			}
			resolve(result);
		};
		Promise.resolve()
			.then(() => factory(tuiFor(extensionPath), theme, keybindings, close))
			.then((component) => {
				if (closed) return;
				id = register(component, extensionPath);
				const overlay = Boolean(options?.overlay);
				const resolved = overlay ? customOverlayOptions(options, component) : undefined;
				const overlayOptions = overlay ? overlayOptionsOf(resolved, component) : undefined;
				const handleKey = overlay ? `custom:${id}` : undefined;
				const handle = overlay ? overlayHandle(handleKey, id, resolved) : undefined;
				const blocked = options?.blocked;
				const params = { extensionPath, id, overlay, overlayOptions, handleKey, blocked };
				rpc.call("ui.custom", params).then(
					() => close(undefined),
					() => close(undefined),
				);
				if (handle) options?.onHandle?.(handle);
			})
			.catch((error) => {
				if (closed) return;
				closed = true;
				reject(error);
			});
	});
}

/** `ctx.ui.addAutocompleteProvider` factories, in the order added (each wraps the one before). */
const autocompleteFactories = [];

/** pi's `addAutocompleteProvider(factory)`: the factory wraps the editor's provider. */
export function addAutocompleteProvider(extensionPath, factory) {
	autocompleteFactories.push({ extensionPath, factory });
	notify("ui.addAutocompleteProvider", { extensionPath });
}

/** The providers wrapped around pi-rs's own (the innermost `current`): `base` is what pi-rs
 * found; its `applyCompletion` replaces the prefix (its answer kept in `state.base`: when it is
 * the final answer, pi-rs's own replacement decides). */
function providerChain(base, state) {
	let provider = {
		getSuggestions: async () => base,
		applyCompletion: (lines, cursorLine, cursorCol, item, prefix) => {
			const line = lines[cursorLine] ?? "";
			const start = cursorCol - prefix.length;
			const next = line.slice(0, start) + item.value + line.slice(cursorCol);
			const out = [...lines];
			out[cursorLine] = next;
			state.base = { lines: out, cursorLine, cursorCol: start + item.value.length };
			return state.base;
		},
		shouldTriggerFileCompletion: () => true,
	};
	for (const { factory } of autocompleteFactories) provider = factory(provider) ?? provider;
	return provider;
}

/** The editor's text and cursor as pi-rs sent them (`lines` or the older `text`). */
function cursorOf(params) {
	const lines = Array.isArray(params.lines) ? params.lines.map(String) : [String(params.text ?? "")];
	const cursorLine = Math.min(Number(params.cursorLine ?? 0), lines.length - 1);
	const cursorCol = Number(params.cursorCol ?? lines[cursorLine].length);
	return { lines, cursorLine, cursorCol };
}

/** `autocomplete.suggest`: pi-tui's `getSuggestions(lines, cursorLine, cursorCol, {signal,
 * force})` of the wrapped providers. */
export async function suggest(params) {
	const provider = providerChain(params.base ?? null, {});
	const controller = new AbortController();
	const { lines, cursorLine, cursorCol } = cursorOf(params);
	const result = await provider.getSuggestions(lines, cursorLine, cursorCol, { signal: controller.signal, force: Boolean(params.force) });
	if (!result || !Array.isArray(result.items) || result.items.length === 0) return null;
	return {
		prefix: String(result.prefix ?? ""),
		items: result.items.map((i) => ({ value: String(i.value), label: String(i.label ?? i.value), description: i.description })),
	};
}

/** `autocomplete.apply`: the wrapped providers' `applyCompletion` for the accepted item; `null`
 * when pi-rs's own replacement decided (the innermost provider's). */
export function applyCompletion(params) {
	const state = {};
	const provider = providerChain(null, state);
	const { lines, cursorLine, cursorCol } = cursorOf(params);
	const item = params.item ?? {};
	const result = provider.applyCompletion?.(lines, cursorLine, cursorCol, item, String(params.prefix ?? ""));
	if (!result || result === state.base || !Array.isArray(result.lines)) return null;
	return { lines: result.lines.map(String), cursorLine: Number(result.cursorLine ?? 0), cursorCol: Number(result.cursorCol ?? 0) };
}
