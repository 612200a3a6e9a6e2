// What Input and Editor share: grapheme steps, word motion, the kill ring, printable keys.
import { decodeKittyPrintable } from "./keys.mjs";

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });
const words = new Intl.Segmenter(undefined, { granularity: "word" });
const PUNCTUATION = "(){}[]<>.,;:'\"!?+-=*/\\|&%^$#@~`";

const isSpace = (s) => s.length > 0 && /^\s+$/u.test(s);
const isWordLike = (s) => /[\p{L}\p{N}]/u.test(s);

/** The length (UTF-16 units) of the grapheme before `at`. */
export function prevGraphemeLength(text, at) {
	let last = 0;
	for (const { segment } of graphemes.segment(text.slice(0, at))) last = segment.length;
	return last;
}

/** The length of the grapheme at `at`. */
export function nextGraphemeLength(text, at) {
	for (const { segment } of graphemes.segment(text.slice(at))) return segment.length;
	return 0;
}

/** Where a word motion backwards from `cursor` lands (spaces, then a word or a run of symbols). */
export function wordLeft(text, cursor) {
	if (cursor <= 0) return 0;
	const segs = [...words.segment(text.slice(0, cursor))].map((s) => s.segment);
	let pos = cursor;
	while (segs.length > 0 && isSpace(segs[segs.length - 1])) pos -= segs.pop().length;
	if (segs.length === 0) return pos;
	const last = segs[segs.length - 1];
	if (isWordLike(last)) {
		let cut = -1;
		for (let i = last.length - 1; i >= 0; i--) {
			if (PUNCTUATION.includes(last[i])) {
				cut = i;
				break;
			}
		}
		pos -= cut === -1 ? last.length : last.length - cut - 1;
	} else {
		while (segs.length > 0 && !isWordLike(segs[segs.length - 1]) && !isSpace(segs[segs.length - 1])) pos -= segs.pop().length;
	}
	return pos;
}

/** Where a word motion forwards from `cursor` lands. */
export function wordRight(text, cursor) {
	if (cursor >= text.length) return text.length;
	const segs = [...words.segment(text.slice(cursor))].map((s) => s.segment);
	let pos = cursor;
	let i = 0;
	while (i < segs.length && isSpace(segs[i])) pos += segs[i++].length;
	if (i >= segs.length) return pos;
	if (isWordLike(segs[i])) {
		const first = segs[i];
		let cut = first.length;
		for (let j = 0; j < first.length; j++) {
			if (PUNCTUATION.includes(first[j])) {
				cut = j;
				break;
			}
		}
		pos += cut;
	} else {
		while (i < segs.length && !isWordLike(segs[i]) && !isSpace(segs[i])) pos += segs[i++].length;
	}
	return pos;
}

/** Emacs's kill ring: consecutive kills accumulate, yank-pop rotates. */
export class KillRing {
	constructor() {
		this.ring = [];
	}
	push(text, prepend, accumulate) {
		if (!text) return;
		if (accumulate && this.ring.length > 0) {
			const last = this.ring.pop();
			this.ring.push(prepend ? text + last : last + text);
		} else this.ring.push(text);
	}
	peek() {
		return this.ring[this.ring.length - 1];
	}
	rotate() {
		if (this.ring.length > 1) this.ring.unshift(this.ring.pop());
	}
	get length() {
		return this.ring.length;
	}
}

/** The text a key types: Kitty's printable keys, or plain text without control characters. */
export function printable(data) {
	const kitty = decodeKittyPrintable(data);
	if (kitty !== undefined) return kitty;
	if (data.length === 0) return undefined;
	for (const ch of data) {
		const c = ch.codePointAt(0);
		if (c < 32 || c === 0x7f || (c >= 0x80 && c <= 0x9f)) return undefined;
	}
	return data;
}

/** Bracketed paste: collects input between the paste markers; calls `onPaste` with the content
 * and returns what follows it, or `undefined` while the paste goes on. Input outside a paste is
 * returned as is. */
export class PasteCollector {
	constructor() {
		this.buffer = undefined;
	}
	feed(data, onPaste) {
		const start = data.indexOf("\x1b[200~");
		if (start !== -1) {
			data = data.slice(0, start) + data.slice(start + 6);
			this.buffer = "";
		}
		if (this.buffer === undefined) return data;
		this.buffer += data;
		const end = this.buffer.indexOf("\x1b[201~");
		if (end === -1) return undefined;
		const content = this.buffer.slice(0, end);
		const rest = this.buffer.slice(end + 6);
		this.buffer = undefined;
		onPaste(content);
		return rest.length > 0 ? rest : undefined;
	}
}
