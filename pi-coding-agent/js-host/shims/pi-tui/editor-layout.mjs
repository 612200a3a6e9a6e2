// How the Editor lays its text out: paste markers, word-aware wrapping, the scroll borders.
import { sliceByColumn, visibleWidth } from "./text.mjs";

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/** `[paste #N +L lines]` and `[paste #N C chars]` markers of pastes `valid(id)` knows, as
 * `[start, end]` ranges. */
export function pasteMarkers(text, valid) {
	const out = [];
	const re = /\[paste #(\d+)( \+\d+ lines| \d+ chars)?\]/g;
	for (const m of text.matchAll(re)) {
		if (valid(Number(m[1]))) out.push([m.index, m.index + m[0].length]);
	}
	return out;
}

/** The graphemes of `text` with each marker as one segment: `[index, segment]`. */
export function segments(text, markers) {
	const out = [];
	let m = 0;
	for (const { index, segment } of graphemes.segment(text)) {
		while (m < markers.length && markers[m][1] <= index) m++;
		const marker = markers[m];
		if (marker && index >= marker[0] && index < marker[1]) {
			if (index === marker[0]) out.push([marker[0], text.slice(marker[0], marker[1])]);
			continue;
		}
		out.push([index, segment]);
	}
	return out;
}

const isCjkBreak = (seg) =>
	[...seg].some((ch) => {
		const c = ch.codePointAt(0);
		return (
			(c >= 0x1100 && c <= 0x11ff) ||
			(c >= 0x2e80 && c <= 0x2fdf) ||
			(c >= 0x2ff0 && c <= 0x2fff) ||
			(c >= 0x3001 && c <= 0x303f) ||
			(c >= 0x3041 && c <= 0x33ff) ||
			(c >= 0x3400 && c <= 0x4dbf) ||
			(c >= 0x4e00 && c <= 0x9fff) ||
			(c >= 0xa960 && c <= 0xa97f) ||
			(c >= 0xac00 && c <= 0xd7ff) ||
			(c >= 0xf900 && c <= 0xfaff) ||
			(c >= 0xfe45 && c <= 0xfe46) ||
			(c >= 0xff61 && c <= 0xffdc) ||
			(c >= 0x16fe0 && c <= 0x16fff) ||
			(c >= 0x1b000 && c <= 0x1b16f) ||
			c === 0x1f200 ||
			(c >= 0x20000 && c <= 0x3ffff)
		);
	});
const hasSpace = (s) => /\s/u.test(s);

/** The rows of one logical line at `max` columns: `{text, start, end}`, broken after spaces (or
 * between CJK characters) when a word does not fit, inside a word only when it must. */
export function wordWrapLine(line, max, markers = []) {
	if (line.length === 0 || max <= 0) return [{ text: "", start: 0, end: 0 }];
	if (visibleWidth(line) <= max) return [{ text: line, start: 0, end: line.length }];
	const segs = segments(line, markers);
	const isMarker = (idx) => markers.some(([s]) => s === idx);
	const chunks = [];
	let width = 0;
	let start = 0;
	let opp = null;
	let oppWidth = 0;
	for (let i = 0; i < segs.length; i++) {
		const [idx, g] = segs[i];
		const gw = visibleWidth(g);
		const marker = isMarker(idx);
		const ws = !marker && hasSpace(g);
		if (width + gw > max) {
			if (opp !== null && width - oppWidth + gw <= max) {
				chunks.push({ text: line.slice(start, opp), start, end: opp });
				start = opp;
				width -= oppWidth;
			} else if (start < idx) {
				chunks.push({ text: line.slice(start, idx), start, end: idx });
				start = idx;
				width = 0;
			}
			opp = null;
		}
		if (gw > max) {
			const sub = wordWrapLine(g, max);
			const last = sub.pop();
			for (const c of sub) chunks.push({ text: c.text, start: idx + c.start, end: idx + c.end });
			if (last) {
				start = idx + last.start;
				width = visibleWidth(last.text);
			}
			opp = null;
			continue;
		}
		width += gw;
		const next = segs[i + 1];
		if (next) {
			const nextMarker = isMarker(next[0]);
			if (ws && (nextMarker || !hasSpace(next[1]))) {
				opp = next[0];
				oppWidth = width;
			} else if (!ws && !hasSpace(next[1])) {
				if ((!marker && isCjkBreak(g)) || (!nextMarker && isCjkBreak(next[1]))) {
					opp = next[0];
					oppWidth = width;
				}
			}
		}
	}
	chunks.push({ text: line.slice(start), start, end: line.length });
	return chunks;
}

/** A border telling how many rows are scrolled out: `─── ↑ 3 more ───`. */
export function scrollBorder(direction, hidden, width) {
	const label = ` ${direction} ${hidden} more `;
	const lw = visibleWidth(label);
	if (lw + 2 <= width) {
		const left = Math.floor((width - lw) / 2);
		return "─".repeat(left) + label + "─".repeat(width - left - lw);
	}
	const indicator = `─── ${direction} ${hidden} more `;
	const iw = visibleWidth(indicator);
	if (iw <= width) return indicator + "─".repeat(width - iw);
	const ellipsis = "...".slice(0, Math.min(width, 3));
	return sliceByColumn(indicator, 0, width - ellipsis.length, true) + ellipsis;
}
