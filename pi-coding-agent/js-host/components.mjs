// The component bridge: components an extension hands to pi's UI (`ctx.ui.custom`, component
// widgets, `setFooter`, `setHeader`) stay here, in the extension's process; pi-rs draws them
// through a proxy that asks for their lines at the width it draws them (`component.render`),
// delivers keys (`component.input`) and drops them (`component.dispose`). `tui.requestRender()`
// tells pi-rs to draw again (`ui.requestRender`).
import { existsSync, readFileSync } from "node:fs";
import * as path from "node:path";
import { errorMessage, rpc } from "./rpc.mjs";

const components = new Map();
/** The component in each keyed slot (`widget:<key>`, `footer`, `header`). */
const slots = new Map();
let nextId = 1;

function notify(method, params) {
	rpc.send({ method, params });
}

/** The `tui` handed to factories (pi's TUI, what extensions use of it). */
export const tui = {
	requestRender: () => notify("ui.requestRender", {}),
	get terminal() {
		return { columns: rpc.state.columns ?? 80, rows: rpc.state.rows ?? 24 };
	},
	showOverlay: () => ({ hide() {}, setHidden() {}, isHidden: () => false, focus() {}, unfocus() {}, isFocused: () => false }),
	hideOverlay() {},
	hasOverlay: () => false,
	setFocus() {},
	start() {},
	stop() {},
};

/** pi's keybindings manager, as far as components use it. */
export const keybindings = {
	matches: (data, id) => false,
	getKeys: () => [],
};

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

/** `component.render`: the lines at `width`, with what was wrong with them in `error`. */
export function renderComponent(params) {
	const entry = components.get(params.id);
	if (!entry) return { lines: [] };
	let lines;
	try {
		lines = entry.component.render(params.width);
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
	return error ? { lines: out, error } : { lines: out };
}

/** `component.input`: a key for the component's `handleInput`. */
export function inputComponent(params) {
	const entry = components.get(params.id);
	if (!entry || typeof entry.component.handleInput !== "function") return null;
	entry.component.handleInput(params.data);
	return null;
}

/** `component.invalidate`: the theme changed. */
export function invalidateComponent(params) {
	components.get(params.id)?.component.invalidate?.();
	return null;
}

function gitBranch(cwd) {
	let dir = cwd;
	for (;;) {
		const head = path.join(dir, ".git", "HEAD");
		if (existsSync(head)) {
			try {
				const text = readFileSync(head, "utf8").trim();
				const ref = /^ref: refs\/heads\/(.+)$/.exec(text);
				return ref ? ref[1] : "detached";
			} catch {
				return null;
			}
		}
		const up = path.dirname(dir);
		if (up === dir) return null;
		dir = up;
	}
}

/** Statuses the host's extensions set (`ctx.ui.setStatus`), for footers. */
export const statuses = new Map();

/** pi's ReadonlyFooterDataProvider. */
export function footerData(cwd) {
	return {
		getGitBranch: () => gitBranch(cwd),
		getExtensionStatuses: () => statuses,
		getAvailableProviderCount: () => rpc.state.providerCount ?? 0,
		onBranchChange: () => () => {},
	};
}

function sizeValue(v) {
	if (typeof v === "number") return v;
	if (typeof v === "string" && /^\d+(\.\d+)?%$/.test(v)) return v;
	return undefined;
}

/** Overlay options as they cross to pi-rs (functions resolved now). */
export function overlayOptionsOf(options, component) {
	let opts = options?.overlayOptions;
	if (typeof opts === "function") opts = opts();
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
				notify("ui.customDone", { extensionPath, id });
				dispose(id);
			}
			resolve(result);
		};
		Promise.resolve()
			.then(() => factory(tui, theme, keybindings, close))
			.then((component) => {
				if (closed) return;
				id = register(component, extensionPath);
				const params = { extensionPath, id, overlay: Boolean(options?.overlay), overlayOptions: overlayOptionsOf(options, component) };
				rpc.call("ui.custom", params).then(
					() => close(undefined),
					() => close(undefined),
				);
				if (options?.overlay) options?.onHandle?.(tui.showOverlay());
			})
			.catch((error) => {
				if (closed) return;
				closed = true;
				reject(error);
			});
	});
}
