// Terminal input as key ids (pi-tui's keys): parseKey, matchesKey, Key, the Kitty helpers.
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
	if (data.length === 2 && data[0] === "\x1b") {
		const c = data.charCodeAt(1);
		if (c >= 1 && c <= 26) return `ctrl+alt+${String.fromCharCode(c + 96)}`;
		const named = { 0x1c: "\\", 0x1d: "]", 0x1f: "-" }[c];
		if (named) return `ctrl+alt+${named}`;
	}
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


/** pi-tui's default keybindings of its components (`tui.*`), by id. */
export const TUI_KEYBINDINGS = {
	"tui.editor.cursorUp": ["up"],
	"tui.editor.cursorDown": ["down"],
	"tui.editor.cursorLeft": ["left", "ctrl+b"],
	"tui.editor.cursorRight": ["right", "ctrl+f"],
	"tui.editor.cursorWordLeft": ["alt+left", "ctrl+left", "alt+b"],
	"tui.editor.cursorWordRight": ["alt+right", "ctrl+right", "alt+f"],
	"tui.editor.cursorLineStart": ["home", "ctrl+a"],
	"tui.editor.cursorLineEnd": ["end", "ctrl+e"],
	"tui.editor.jumpForward": ["ctrl+]"],
	"tui.editor.jumpBackward": ["ctrl+alt+]"],
	"tui.editor.pageUp": ["pageUp", "ctrl+pageUp"],
	"tui.editor.pageDown": ["pageDown", "ctrl+pageDown"],
	"tui.editor.deleteCharBackward": ["backspace"],
	"tui.editor.deleteCharForward": ["delete", "ctrl+d"],
	"tui.editor.deleteWordBackward": ["ctrl+w", "alt+backspace"],
	"tui.editor.deleteWordForward": ["alt+d", "alt+delete"],
	"tui.editor.deleteToLineStart": ["ctrl+u"],
	"tui.editor.deleteToLineEnd": ["ctrl+k"],
	"tui.editor.yank": ["ctrl+y"],
	"tui.editor.yankPop": ["alt+y"],
	"tui.editor.undo": ["ctrl+-"],
	"tui.input.newLine": ["shift+enter", "ctrl+j"],
	"tui.input.submit": ["enter"],
	"tui.input.tab": ["tab"],
	"tui.input.copy": ["ctrl+c"],
	"tui.select.up": ["up"],
	"tui.select.down": ["down"],
	"tui.select.pageUp": ["pageUp"],
	"tui.select.pageDown": ["pageDown"],
	"tui.select.confirm": ["enter"],
	"tui.select.cancel": ["escape", "ctrl+c"],
};

/** pi-tui's KeybindingsManager, as its components use it. */
export class KeybindingsManager {
	constructor(definitions = TUI_KEYBINDINGS, overrides = {}) {
		this.keys = { ...definitions };
		for (const [id, keys] of Object.entries(overrides ?? {})) this.keys[id] = Array.isArray(keys) ? keys : [keys];
	}
	matches(data, id) {
		return (this.keys[id] ?? []).some((key) => matchesKey(data, key));
	}
	getKeys(id) {
		return [...(this.keys[id] ?? [])];
	}
}

let keybindings = new KeybindingsManager();

export function getKeybindings() {
	return keybindings;
}

export function setKeybindings(manager) {
	keybindings = manager;
}

/** Whether `data` is bound to `id` in the current keybindings. */
export function keyIs(data, id) {
	return keybindings.matches(data, id);
}
