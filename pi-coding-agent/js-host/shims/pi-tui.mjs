// pi-rs's @earendil-works/pi-tui for extensions: components that render to lines. Trees of Text,
// Box, Container and Spacer cross to pi-rs, which draws them with its own pi-tui; any other
// component (a custom class with render(width)) is rendered here, to lines.
// CSI, OSC, APC (pi's CURSOR_MARKER) and two-byte escapes, all zero-width.
const ANSI = /\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[\]_][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]/g;

export const CURSOR_MARKER = "\x1b_pi:c\x07";

function charWidth(cp) {
	if (cp === 0 || cp < 32 || (cp >= 0x7f && cp < 0xa0)) return 0;
	if (cp >= 0x300 && cp <= 0x36f) return 0;
	if (cp === 0x200b || cp === 0x200d || (cp >= 0xfe00 && cp <= 0xfe0f)) return 0;
	if (
		(cp >= 0x1100 && cp <= 0x115f) ||
		(cp >= 0x2e80 && cp <= 0xa4cf) ||
		(cp >= 0xac00 && cp <= 0xd7a3) ||
		(cp >= 0xf900 && cp <= 0xfaff) ||
		(cp >= 0xfe30 && cp <= 0xfe4f) ||
		(cp >= 0xff00 && cp <= 0xff60) ||
		(cp >= 0xffe0 && cp <= 0xffe6) ||
		(cp >= 0x1f300 && cp <= 0x1faff) ||
		(cp >= 0x20000 && cp <= 0x3fffd)
	)
		return 2;
	return 1;
}

const segmenter = new Intl.Segmenter();
const RGI_EMOJI = /^\p{RGI_Emoji}$/v;

/** The cells of one grapheme cluster (pi-tui's rule: RGI emoji and regional indicators are 2,
 * otherwise the base character's width). */
function graphemeWidth(segment) {
	if (segment.length === 1) return charWidth(segment.charCodeAt(0));
	if (RGI_EMOJI.test(segment)) return 2;
	const cp = segment.codePointAt(0);
	if (cp >= 0x1f1e6 && cp <= 0x1f1ff) return 2;
	return charWidth(cp);
}

export function visibleWidth(text) {
	let width = 0;
	const clean = String(text).replace(ANSI, "").replace(/\t/g, "   ");
	for (const { segment } of segmenter.segment(clean)) width += graphemeWidth(segment);
	return width;
}

function tokens(text) {
	const out = [];
	let last = 0;
	const push = (chunk) => {
		for (const { segment } of segmenter.segment(chunk)) out.push({ ch: segment, w: graphemeWidth(segment) });
	};
	for (const m of String(text).matchAll(ANSI)) {
		if (m.index > last) push(text.slice(last, m.index));
		out.push({ code: m[0] });
		last = m.index + m[0].length;
	}
	push(String(text).slice(last));
	return out;
}

export function truncateToWidth(text, maxWidth, ellipsis = "...", pad = false) {
	text = String(text);
	if (visibleWidth(text) <= maxWidth) return pad ? text + " ".repeat(maxWidth - visibleWidth(text)) : text;
	const target = Math.max(0, maxWidth - visibleWidth(ellipsis));
	let out = "";
	let width = 0;
	for (const t of tokens(text)) {
		if (t.code) {
			out += t.code;
			continue;
		}
		if (width + t.w > target) break;
		out += t.ch;
		width += t.w;
	}
	out += ellipsis === "" ? "\x1b[0m" : `\x1b[0m${ellipsis}\x1b[0m`;
	if (pad) out += " ".repeat(Math.max(0, maxWidth - width - visibleWidth(ellipsis)));
	return out;
}

/** The SGR attribute a code sets, and the ones a code closes (pi-tui's AnsiCodeTracker, simply). */
const CLOSES = { 22: ["bold", "dim"], 23: ["italic"], 24: ["underline"], 25: ["blink"], 27: ["inverse"], 28: ["hidden"], 29: ["strike"], 39: ["fg"], 49: ["bg"] };
const OPENS = { 1: "bold", 2: "dim", 3: "italic", 4: "underline", 5: "blink", 7: "inverse", 8: "hidden", 9: "strike" };

function sgrSlot(params) {
	const first = Number(params.split(";")[0] || 0);
	if (OPENS[first]) return OPENS[first];
	if ((first >= 30 && first <= 38) || (first >= 90 && first <= 97)) return "fg";
	if ((first >= 40 && first <= 48) || (first >= 100 && first <= 107)) return "bg";
	return undefined;
}

/** The styles still open at the end of `line`, as codes to start the next line with. */
function activeCodes(line) {
	const open = new Map();
	for (const m of line.matchAll(/\x1b\[([0-9;]*)m|\x1b\]pi:(fg|bg):[^\x07]*\x07/g)) {
		if (m[2]) {
			open.set(m[2], { osc: m[0] });
			continue;
		}
		const params = m[1];
		if (params === "" || params === "0") {
			open.clear();
			continue;
		}
		const code = Number(params.split(";")[0]);
		if (CLOSES[code]) {
			for (const slot of CLOSES[code]) open.delete(slot);
			continue;
		}
		const slot = sgrSlot(params);
		if (slot) open.set(slot, { sgr: params });
	}
	// One SGR in pi-tui's order, then the theme placeholders.
	const order = ["bold", "dim", "italic", "underline", "blink", "inverse", "hidden", "strike", "fg", "bg"];
	const sgr = order.map((slot) => open.get(slot)?.sgr).filter(Boolean);
	const osc = order.map((slot) => open.get(slot)?.osc).filter(Boolean);
	return (sgr.length > 0 ? `\x1b[${sgr.join(";")}m` : "") + osc.join("");
}

/** Word wrap that keeps styles across breaks. */
export function wrapTextWithAnsi(text, width) {
	const result = [];
	width = Math.max(1, width);
	for (const input of String(text).split("\n")) {
		const prefix = result.length > 0 ? activeCodes(result[result.length - 1]) : "";
		let line = prefix;
		let lineWidth = 0;
		const words = input.split(/( +)/);
		for (const word of words) {
			if (word.length === 0) continue;
			const w = visibleWidth(word);
			if (lineWidth + w <= width) {
				line += word;
				lineWidth += w;
				continue;
			}
			if (/^ +$/.test(word)) {
				result.push(line.replace(/ +$/, ""));
				line = activeCodes(line);
				lineWidth = 0;
				continue;
			}
			if (lineWidth > 0) {
				result.push(line.replace(/ +$/, ""));
				line = activeCodes(line);
				lineWidth = 0;
			}
			for (const t of tokens(word)) {
				if (t.code) {
					line += t.code;
					continue;
				}
				if (lineWidth + t.w > width) {
					result.push(line);
					line = activeCodes(line);
					lineWidth = 0;
				}
				line += t.ch;
				lineWidth += t.w;
			}
		}
		result.push(line);
	}
	return result;
}

function padLine(line, width, bg) {
	const padded = line + " ".repeat(Math.max(0, width - visibleWidth(line)));
	return bg ? bg(padded) : padded;
}

/** Samples a style function so pi-rs can apply it: `{prefix, suffix}` around the text. */
export function sampleStyle(fn) {
	if (typeof fn !== "function") return undefined;
	const marker = "\u0000";
	const styled = String(fn(marker));
	const at = styled.indexOf(marker);
	if (at === -1) return undefined;
	return { prefix: styled.slice(0, at), suffix: styled.slice(at + 1) };
}

export class Container {
	constructor() {
		this.children = [];
	}
	addChild(child) {
		this.children.push(child);
	}
	removeChild(child) {
		const i = this.children.indexOf(child);
		if (i !== -1) this.children.splice(i, 1);
	}
	clear() {
		this.children = [];
	}
	invalidate() {
		for (const c of this.children) c.invalidate?.();
	}
	render(width) {
		return this.children.flatMap((c) => c.render(width));
	}
	toTree(width) {
		return { type: "container", children: this.children.map((c) => toTree(c, width)) };
	}
}

export class Text {
	constructor(text = "", paddingX = 1, paddingY = 1, customBgFn) {
		this.text = text;
		this.paddingX = paddingX;
		this.paddingY = paddingY;
		this.customBgFn = customBgFn;
	}
	setText(text) {
		this.text = text;
	}
	setCustomBgFn(fn) {
		this.customBgFn = fn;
	}
	invalidate() {}
	render(width) {
		if (!this.text || this.text.trim() === "") return [];
		const px = Math.min(this.paddingX, Math.floor(Math.max(0, width - 1) / 2));
		const contentWidth = Math.max(1, width - px * 2);
		const margin = " ".repeat(px);
		const blank = padLine("", width, this.customBgFn);
		const lines = wrapTextWithAnsi(this.text.replace(/\t/g, "   "), contentWidth).map((l) => padLine(margin + l + margin, width, this.customBgFn));
		return [...Array(this.paddingY).fill(blank), ...lines, ...Array(this.paddingY).fill(blank)];
	}
	toTree() {
		return { type: "text", text: String(this.text ?? ""), paddingX: this.paddingX, paddingY: this.paddingY, bg: sampleStyle(this.customBgFn) };
	}
}

export class TruncatedText {
	constructor(text = "", paddingX = 0, paddingY = 0) {
		this.text = text;
		this.paddingX = paddingX;
		this.paddingY = paddingY;
	}
	setText(text) {
		this.text = text;
	}
	invalidate() {}
	render(width) {
		const inner = Math.max(1, width - this.paddingX * 2);
		const first = String(this.text).split("\n")[0];
		const line = " ".repeat(this.paddingX) + truncateToWidth(first, inner);
		const blank = " ".repeat(width);
		return [...Array(this.paddingY).fill(blank), padLine(line, width), ...Array(this.paddingY).fill(blank)];
	}
}

export class Box extends Container {
	constructor(paddingX = 1, paddingY = 1, bgFn) {
		super();
		this.paddingX = paddingX;
		this.paddingY = paddingY;
		this.bgFn = bgFn;
	}
	setBgFn(fn) {
		this.bgFn = fn;
	}
	render(width) {
		if (this.children.length === 0) return [];
		const contentWidth = Math.max(1, width - this.paddingX * 2);
		const left = " ".repeat(this.paddingX);
		const childLines = this.children.flatMap((c) => c.render(contentWidth));
		if (childLines.length === 0) return [];
		const blank = padLine("", width, this.bgFn);
		return [
			...Array(this.paddingY).fill(blank),
			...childLines.map((l) => padLine(left + l, width, this.bgFn)),
			...Array(this.paddingY).fill(blank),
		];
	}
	toTree(width) {
		const inner = Math.max(1, width - this.paddingX * 2);
		return {
			type: "box",
			paddingX: this.paddingX,
			paddingY: this.paddingY,
			bg: sampleStyle(this.bgFn),
			children: this.children.map((c) => toTree(c, inner)),
		};
	}
}

export class Spacer {
	constructor(lines = 1) {
		this.lines = lines;
	}
	setLines(lines) {
		this.lines = lines;
	}
	invalidate() {}
	render() {
		return Array(this.lines).fill("");
	}
	toTree() {
		return { type: "spacer", lines: this.lines };
	}
}

export class Markdown {
	constructor(text = "", paddingX = 1, paddingY = 1, theme, defaultTextStyle) {
		this.text = text;
		this.paddingX = paddingX;
		this.paddingY = paddingY;
		this.theme = theme;
		this.defaultTextStyle = defaultTextStyle;
	}
	setText(text) {
		this.text = text;
	}
	invalidate() {}
	render(width) {
		return new Text(this.text, this.paddingX, this.paddingY, this.defaultTextStyle?.bgColor).render(width);
	}
	toTree() {
		return { type: "markdown", text: String(this.text ?? ""), paddingX: this.paddingX, paddingY: this.paddingY };
	}
}

/** A component as pi-rs draws it: known components as a tree, others as their lines. */
export function toTree(component, width) {
	if (component && typeof component.toTree === "function" && Object.getPrototypeOf(component).toTree !== undefined) {
		const own = Object.getPrototypeOf(component).constructor;
		if ([Text, Box, Container, Spacer, Markdown].includes(own)) return component.toTree(width);
	}
	const lines = component?.render?.(width) ?? [];
	return { type: "lines", lines: lines.map(String) };
}

const PRIMARY_COLUMN_WIDTH = 32;
const PRIMARY_COLUMN_GAP = 2;
const MIN_DESCRIPTION_WIDTH = 10;
const identity = (t) => t;

/** pi-tui's SelectList: a scrolling list of `{value, label?, description?}` items, the selected one
 * marked `→ `, descriptions in a second column when the width allows. */
export class SelectList {
	constructor(items = [], maxVisible = 5, theme = {}, layout = {}) {
		this.items = items;
		this.filteredItems = items;
		this.maxVisible = maxVisible;
		this.theme = theme ?? {};
		this.layout = layout ?? {};
		this.selectedIndex = 0;
		this.capturesViewportInput = true;
		this.onSelect = undefined;
		this.onCancel = undefined;
		this.onSelectionChange = undefined;
	}
	get filtered() {
		return this.filteredItems;
	}
	style(name, text) {
		return (this.theme[name] ?? identity)(text);
	}
	setFilter(filter) {
		const f = String(filter).toLowerCase();
		this.filteredItems = this.items.filter((i) => String(i.value).toLowerCase().startsWith(f));
		this.selectedIndex = 0;
	}
	setSelectedIndex(index) {
		this.selectedIndex = Math.max(0, Math.min(index, this.filteredItems.length - 1));
	}
	getSelectedItem() {
		return this.filteredItems[this.selectedIndex] ?? null;
	}
	invalidate() {}
	changed() {
		const item = this.filteredItems[this.selectedIndex];
		if (item) this.onSelectionChange?.(item);
	}
	handleInput(data) {
		const count = this.filteredItems.length;
		if (matchesKey(data, "up")) {
			this.selectedIndex = this.selectedIndex === 0 ? count - 1 : this.selectedIndex - 1;
			this.changed();
		} else if (matchesKey(data, "down")) {
			this.selectedIndex = this.selectedIndex === count - 1 ? 0 : this.selectedIndex + 1;
			this.changed();
		} else if (matchesKey(data, "pageUp") || matchesKey(data, "pageDown")) {
			const direction = matchesKey(data, "pageUp") ? -1 : 1;
			const page = Math.max(0, Math.min(count - 1, this.selectedIndex + direction * this.maxVisible));
			if (count === 0 || page === this.selectedIndex) return;
			this.selectedIndex = page;
			this.changed();
		} else if (matchesKey(data, "enter")) {
			const item = this.filteredItems[this.selectedIndex];
			if (item) this.onSelect?.(item);
		} else if (matchesKey(data, "escape") || matchesKey(data, "ctrl+c")) {
			this.onCancel?.();
		}
	}
	displayValue(item) {
		return item.label || item.value;
	}
	primaryColumnWidth() {
		const rawMin = this.layout.minPrimaryColumnWidth ?? this.layout.maxPrimaryColumnWidth ?? PRIMARY_COLUMN_WIDTH;
		const rawMax = this.layout.maxPrimaryColumnWidth ?? this.layout.minPrimaryColumnWidth ?? PRIMARY_COLUMN_WIDTH;
		const min = Math.max(1, Math.min(rawMin, rawMax));
		const max = Math.max(1, Math.max(rawMin, rawMax));
		const widest = this.filteredItems.reduce((w, item) => Math.max(w, visibleWidth(this.displayValue(item)) + PRIMARY_COLUMN_GAP), 0);
		return Math.max(min, Math.min(widest, max));
	}
	truncatePrimary(item, selected, maxWidth, columnWidth) {
		const text = this.displayValue(item);
		const custom = this.layout.truncatePrimary ? this.layout.truncatePrimary({ text, maxWidth, columnWidth, item, isSelected: selected }) : truncateToWidth(text, maxWidth, "");
		return truncateToWidth(custom, maxWidth, "");
	}
	renderItem(item, selected, width, description, columnWidth) {
		const prefix = selected ? "→ " : "  ";
		if (description && width > 40) {
			const column = Math.max(1, Math.min(columnWidth, width - 2 - 4));
			const value = this.truncatePrimary(item, selected, Math.max(1, column - PRIMARY_COLUMN_GAP), column);
			const valueWidth = visibleWidth(value);
			const spacing = " ".repeat(Math.max(1, column - valueWidth));
			const remaining = width - (2 + valueWidth + spacing.length) - 2;
			if (remaining > MIN_DESCRIPTION_WIDTH) {
				const desc = truncateToWidth(description, remaining, "");
				if (selected) return this.style("selectedText", `${prefix}${value}${spacing}${desc}`);
				return prefix + value + this.style("description", spacing + desc);
			}
		}
		const maxWidth = width - 2 - 2;
		const value = this.truncatePrimary(item, selected, maxWidth, maxWidth);
		return selected ? this.style("selectedText", `${prefix}${value}`) : prefix + value;
	}
	render(width) {
		if (this.filteredItems.length === 0) return [this.style("noMatch", "  No matching commands")];
		const count = this.filteredItems.length;
		const start = Math.max(0, Math.min(this.selectedIndex - Math.floor(this.maxVisible / 2), count - this.maxVisible));
		const end = Math.min(start + this.maxVisible, count);
		const columnWidth = this.primaryColumnWidth();
		const lines = [];
		for (let i = start; i < end; i++) {
			const item = this.filteredItems[i];
			const description = item.description ? String(item.description).replace(/[\r\n]+/g, " ").trim() : undefined;
			lines.push(this.renderItem(item, i === this.selectedIndex, width, description, columnWidth));
		}
		if (start > 0 || end < count) {
			lines.push(this.style("scrollInfo", truncateToWidth(`  (${this.selectedIndex + 1}/${count})`, width - 2, "")));
		}
		return lines;
	}
}

export class Input {
	constructor() {
		this.value = "";
		this.focused = false;
		this.onSubmit = undefined;
		this.onEscape = undefined;
	}
	getValue() {
		return this.value;
	}
	setValue(value) {
		this.value = value;
	}
	invalidate() {}
	handleInput(data) {
		if (matchesKey(data, "enter")) this.onSubmit?.(this.value);
		else if (matchesKey(data, "escape")) this.onEscape?.();
		else if (matchesKey(data, "backspace")) this.value = this.value.slice(0, -1);
		else if (data >= " ") this.value += data;
	}
	render(width) {
		return [truncateToWidth(`> ${this.value}`, width, "")];
	}
}

export class Editor extends Input {
	constructor(tui, theme) {
		super();
		this.tui = tui;
		this.theme = theme;
	}
	getText() {
		return this.value;
	}
	setText(text) {
		this.value = text;
	}
}

export class SettingsList extends SelectList {}

const LEGACY = {
	"\x1b": "escape",
	"\t": "tab",
	"\r": "enter",
	"\n": "enter",
	"\x1bOM": "enter",
	"\x00": "ctrl+space",
	" ": "space",
	"\x7f": "backspace",
	"\x08": "backspace",
	"\x1b[Z": "shift+tab",
	"\x1b\r": "alt+enter",
	"\x1b ": "alt+space",
	"\x1b\x7f": "alt+backspace",
	"\x1b\b": "alt+backspace",
	"\x1b[A": "up",
	"\x1bOA": "up",
	"\x1b[B": "down",
	"\x1bOB": "down",
	"\x1b[C": "right",
	"\x1bOC": "right",
	"\x1b[D": "left",
	"\x1bOD": "left",
	"\x1b[H": "home",
	"\x1bOH": "home",
	"\x1b[1~": "home",
	"\x1b[7~": "home",
	"\x1b[F": "end",
	"\x1bOF": "end",
	"\x1b[4~": "end",
	"\x1b[8~": "end",
	"\x1b[2~": "insert",
	"\x1b[3~": "delete",
	"\x1b[5~": "pageUp",
	"\x1b[6~": "pageDown",
	"\x1bb": "alt+left",
	"\x1bOP": "f1",
	"\x1bOQ": "f2",
	"\x1bOR": "f3",
	"\x1bOS": "f4",
	"\x1b[15~": "f5",
	"\x1b[17~": "f6",
	"\x1b[18~": "f7",
	"\x1b[19~": "f8",
	"\x1b[20~": "f9",
	"\x1b[21~": "f10",
	"\x1b[23~": "f11",
	"\x1b[24~": "f12",
	"\x1bf": "alt+right",
};
const CSI_FINAL = { A: "up", B: "down", C: "right", D: "left", H: "home", F: "end", P: "f1", Q: "f2", R: "f3", S: "f4" };
const CSI_TILDE = { 2: "insert", 3: "delete", 5: "pageUp", 6: "pageDown", 1: "home", 7: "home", 4: "end", 8: "end" };
const CODEPOINT_NAMES = { 27: "escape", 13: "enter", 9: "tab", 127: "backspace", 8: "backspace", 32: "space" };
const MODIFIER_ORDER = ["ctrl", "shift", "alt", "super"];

function withModifiers(name, modifier) {
	const mods = [];
	const bits = Math.max(0, modifier - 1);
	if (bits & 4) mods.push("ctrl");
	if (bits & 1) mods.push("shift");
	if (bits & 2) mods.push("alt");
	if (bits & 8) mods.push("super");
	return [...mods, name].join("+");
}

let kittyActive = false;
let lastEventType = "press";

export function isKittyProtocolActive() {
	return kittyActive;
}

export function setKittyProtocolActive(active) {
	kittyActive = Boolean(active);
}

/** The key id of terminal input (pi-tui's `parseKey`): `"up"`, `"ctrl+c"`, `"shift+tab"`, `"a"`;
 * legacy sequences, xterm modifier sequences and Kitty's CSI u; `undefined` when unknown. */
export function parseKey(data) {
	data = String(data);
	lastEventType = "press";
	const kitty = /^\x1b\[(\d+)(?::\d*)*(?:;(\d+)(?::(\d+))?)?(?:;[\d:]*)?u$/.exec(data);
	if (kitty) {
		const code = Number(kitty[1]);
		const modifier = Number(kitty[2] ?? 1);
		lastEventType = kitty[3] === "3" ? "release" : kitty[3] === "2" ? "repeat" : "press";
		const name = CODEPOINT_NAMES[code] ?? String.fromCodePoint(code).toLowerCase();
		return withModifiers(name, modifier);
	}
	const csi = /^\x1b\[(?:1;)?(\d+)(?::(\d+))?([A-DHFPQRS])$/.exec(data);
	if (csi) return withModifiers(CSI_FINAL[csi[3]], Number(csi[1]));
	const tilde = /^\x1b\[(\d+);(\d+)~$/.exec(data);
	if (tilde && CSI_TILDE[tilde[1]]) return withModifiers(CSI_TILDE[tilde[1]], Number(tilde[2]));
	const other = /^\x1b\[27;(\d+);(\d+)~$/.exec(data);
	if (other) return withModifiers(CODEPOINT_NAMES[Number(other[2])] ?? String.fromCodePoint(Number(other[2])).toLowerCase(), Number(other[1]));
	if (LEGACY[data]) return LEGACY[data];
	if (data.length === 1) {
		const c = data.charCodeAt(0);
		if (c >= 1 && c <= 26) return `ctrl+${String.fromCharCode(c + 96)}`;
		if (c === 0x1c) return "ctrl+\\";
		if (c === 0x1d) return "ctrl+]";
		if (c === 0x1f) return "ctrl+-";
		if (c >= 32 && c < 127) return data;
	}
	if (data.length === 2 && data[0] === "\x1b" && data.charCodeAt(1) >= 32) return `alt+${data[1]}`;
	return undefined;
}

/** The printable text of a Kitty CSI u key (`undefined` for other input). */
export function decodeKittyPrintable(data) {
	const m = /^\x1b\[(\d+)(?::(\d+))?(?::\d*)?(?:;(\d+)(?::\d+)?)?(?:;([\d:]+))?u$/.exec(String(data));
	if (!m) return undefined;
	if (m[4]) return m[4].split(":").map((c) => String.fromCodePoint(Number(c))).join("");
	const modifier = Number(m[3] ?? 1) - 1;
	if (modifier & ~1) return undefined;
	const code = modifier & 1 && m[2] ? Number(m[2]) : Number(m[1]);
	return code >= 32 && code !== 127 ? String.fromCodePoint(code) : undefined;
}

function normalizeKeyId(key) {
	const parts = String(key).split("+");
	const name = parts.pop();
	const lowerName = name.length === 1 ? name : name.toLowerCase();
	const mods = parts.map((p) => p.toLowerCase()).sort((a, b) => MODIFIER_ORDER.indexOf(a) - MODIFIER_ORDER.indexOf(b));
	const aliases = { return: "enter", esc: "escape", pageup: "pageup", pagedown: "pagedown" };
	return [...mods, aliases[lowerName] ?? lowerName].join("+");
}

/** Whether terminal input `data` is the key `key` (`"enter"`, `"ctrl+c"`, `"shift+tab"`, `"a"`). */
export function matchesKey(data, key) {
	let parsed = parseKey(data);
	if (parsed === undefined) return false;
	// A shifted letter typed without Kitty's protocol.
	if (/^[A-Z]$/.test(parsed)) parsed = `shift+${parsed.toLowerCase()}`;
	return normalizeKeyId(parsed) === normalizeKeyId(key);
}

/** Whether `data` is a Kitty key release. */
export function isKeyRelease(data) {
	return /^\x1b\[[\d:;]*:3[u~A-DHF]$/.test(String(data));
}

/** Whether `data` is a Kitty key repeat. */
export function isKeyRepeat(data) {
	return /^\x1b\[[\d:;]*:2[u~A-DHF]$/.test(String(data));
}

const keyName = (name) => name;
/** `ctrlShift` → `(k) => "ctrl+shift+k"`: pi-tui's modifier helpers, every order and combination. */
const modifiers = (prop) => {
	const parts = String(prop).split(/(?=[A-Z])/).map((p) => p.toLowerCase());
	if (parts.length === 0 || !parts.every((p) => ["ctrl", "shift", "alt", "super"].includes(p))) return undefined;
	return (k) => `${parts.join("+")}+${k}`;
};
export const Key = new Proxy(
	{},
	{ get: (_target, prop) => (typeof prop === "string" ? (modifiers(prop) ?? keyName(prop)) : undefined) },
);

export function renderFakeCursor(char = " ") {
	return `\x1b[7m${char}\x1b[27m`;
}

export function fuzzyFilter(items, query, getText = (x) => String(x)) {
	const q = String(query).toLowerCase();
	if (!q) return items;
	return items.filter((item) => {
		const text = getText(item).toLowerCase();
		let at = 0;
		for (const ch of q) {
			at = text.indexOf(ch, at);
			if (at === -1) return false;
			at += 1;
		}
		return true;
	});
}

export function fuzzyMatch(query, text) {
	return fuzzyFilter([text], query).length > 0 ? { matches: true, score: 0 } : { matches: false, score: 0 };
}

export class Loader extends Text {
	constructor(tui, spinnerColor, messageColor, message = "Loading...") {
		super(message, 1, 0);
	}
	start() {}
	stop() {}
	setMessage(message) {
		this.setText(message);
	}
}

export class CancellableLoader extends Loader {
	constructor(...args) {
		super(...args);
		this.signal = new AbortController().signal;
		this.onAbort = undefined;
	}
}
