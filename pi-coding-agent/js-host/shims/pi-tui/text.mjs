// Text measuring, truncating and wrapping with ANSI styles (pi-tui's utils), as the host needs them.
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
	if (maxWidth <= 0) return "";
	if (text.length === 0) return pad ? " ".repeat(maxWidth) : "";
	const ellipsisWidth = visibleWidth(ellipsis);
	if (ellipsisWidth >= maxWidth && visibleWidth(text) > maxWidth) {
		// Only (part of) the ellipsis fits.
		const clipped = sliceByColumn(ellipsis, 0, maxWidth, true);
		const w = visibleWidth(clipped);
		if (w === 0) return pad ? " ".repeat(maxWidth) : "";
		return `\x1b[0m${clipped}\x1b[0m${pad ? " ".repeat(maxWidth - w) : ""}`;
	}
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

export function padLine(line, width, bg) {
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
/** pi-tui's fake cursor: `char` between the markers pi-rs's terminal draws as a cursor. */
export function renderFakeCursor(char) {
	return `\x1b_pi:fc\x07${char}\x1b_pi:/fc\x07`;
}


/** The columns `start`..`start + length` of `line` (styles inside kept); with `strict`, a wide
 * character crossing the end is left out. */
export function sliceByColumn(line, start, length, strict = false) {
	if (length <= 0) return "";
	const end = start + length;
	let out = "";
	let col = 0;
	for (const t of tokens(String(line))) {
		if (t.code) {
			if (col >= start && col < end) out += t.code;
			continue;
		}
		if (col >= end) break;
		if (col >= start && (!strict || col + t.w <= end)) out += t.ch;
		col += t.w;
	}
	return out;
}
