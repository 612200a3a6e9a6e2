// pi-tui's Input: one line of text with a cursor, Emacs editing keys, a kill ring, undo,
// bracketed paste, and horizontal scrolling around the cursor.
import { keyIs } from "./keys.mjs";
import { KillRing, PasteCollector, nextGraphemeLength, prevGraphemeLength, printable, wordLeft, wordRight } from "./text-edit.mjs";
import { CURSOR_MARKER, renderFakeCursor, sliceByColumn, truncateToWidth, visibleWidth } from "./text.mjs";

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });
const firstGrapheme = (text) => {
	for (const { segment } of graphemes.segment(text)) return segment;
	return "";
};

export class Input {
	constructor(options = {}) {
		this.value = "";
		this.cursor = 0;
		this.prompt = options?.prompt ?? "> ";
		this.placeholder = options?.placeholder ?? "";
		this.placeholderStyle = options?.placeholderStyle ?? ((t) => t);
		this.focused = false;
		this.onSubmit = undefined;
		this.onEscape = undefined;
		this.killRing = new KillRing();
		this.lastAction = null;
		this.undoStack = [];
		this.paste = new PasteCollector();
	}
	getValue() {
		return this.value;
	}
	setValue(value) {
		this.value = String(value);
		this.cursor = Math.min(this.cursor, this.value.length);
	}
	invalidate() {}
	pushUndo() {
		this.undoStack.push({ value: this.value, cursor: this.cursor });
	}
	insert(text) {
		if (/^\s+$/u.test(text) || this.lastAction !== "type") this.pushUndo();
		this.lastAction = "type";
		this.value = this.value.slice(0, this.cursor) + text + this.value.slice(this.cursor);
		this.cursor += text.length;
	}
	kill(from, to, prepend) {
		const accumulate = this.lastAction === "kill";
		this.pushUndo();
		this.killRing.push(this.value.slice(from, to), prepend, accumulate);
		this.value = this.value.slice(0, from) + this.value.slice(to);
		this.lastAction = "kill";
		this.cursor = from;
	}
	pasteText(text) {
		this.lastAction = null;
		this.pushUndo();
		const clean = text.replace(/[\r\n]/g, "").replace(/\t/g, "    ");
		this.value = this.value.slice(0, this.cursor) + clean + this.value.slice(this.cursor);
		this.cursor += clean.length;
	}
	handleInput(data) {
		const rest = this.paste.feed(String(data), (content) => this.pasteText(content));
		if (rest === undefined) return;
		if (this.paste.buffer === undefined && rest !== String(data)) {
			this.handleInput(rest);
			return;
		}
		this.handleKey(rest);
	}
	handleKey(data) {
		const v = this.value;
		const c = this.cursor;
		if (keyIs(data, "tui.select.cancel")) this.onEscape?.();
		else if (keyIs(data, "tui.editor.undo")) {
			const last = this.undoStack.pop();
			if (last) {
				this.value = last.value;
				this.cursor = last.cursor;
				this.lastAction = null;
			}
		} else if (keyIs(data, "tui.input.submit") || data === "\n") this.onSubmit?.(this.value);
		else if (keyIs(data, "tui.editor.deleteCharBackward")) {
			this.lastAction = null;
			if (c > 0) {
				this.pushUndo();
				const n = prevGraphemeLength(v, c);
				this.value = v.slice(0, c - n) + v.slice(c);
				this.cursor = c - n;
			}
		} else if (keyIs(data, "tui.editor.deleteCharForward")) {
			this.lastAction = null;
			if (c < v.length) {
				this.pushUndo();
				this.value = v.slice(0, c) + v.slice(c + nextGraphemeLength(v, c));
			}
		} else if (keyIs(data, "tui.editor.deleteWordBackward")) {
			if (c > 0) this.kill(wordLeft(v, c), c, true);
		} else if (keyIs(data, "tui.editor.deleteWordForward")) {
			if (c < v.length) this.kill(c, wordRight(v, c), false);
		} else if (keyIs(data, "tui.editor.deleteToLineStart")) {
			if (c > 0) this.kill(0, c, true);
		} else if (keyIs(data, "tui.editor.deleteToLineEnd")) {
			if (c < v.length) this.kill(c, v.length, false);
		} else if (keyIs(data, "tui.editor.yank")) {
			const text = this.killRing.peek();
			if (text !== undefined) {
				this.pushUndo();
				this.value = v.slice(0, c) + text + v.slice(c);
				this.cursor = c + text.length;
				this.lastAction = "yank";
			}
		} else if (keyIs(data, "tui.editor.yankPop")) {
			if (this.lastAction === "yank" && this.killRing.length > 1) {
				this.pushUndo();
				const prev = this.killRing.peek().length;
				this.killRing.rotate();
				const text = this.killRing.peek();
				this.value = v.slice(0, c - prev) + text + v.slice(c);
				this.cursor = c - prev + text.length;
			}
		} else if (keyIs(data, "tui.editor.cursorLeft")) {
			this.lastAction = null;
			this.cursor = c - prevGraphemeLength(v, c);
		} else if (keyIs(data, "tui.editor.cursorRight")) {
			this.lastAction = null;
			this.cursor = c + nextGraphemeLength(v, c);
		} else if (keyIs(data, "tui.editor.cursorLineStart")) {
			this.lastAction = null;
			this.cursor = 0;
		} else if (keyIs(data, "tui.editor.cursorLineEnd")) {
			this.lastAction = null;
			this.cursor = v.length;
		} else if (keyIs(data, "tui.editor.cursorWordLeft")) {
			this.lastAction = null;
			this.cursor = wordLeft(v, c);
		} else if (keyIs(data, "tui.editor.cursorWordRight")) {
			this.lastAction = null;
			this.cursor = wordRight(v, c);
		} else {
			const text = printable(data);
			if (text !== undefined) this.insert(text);
		}
	}
	render(width) {
		const promptWidth = visibleWidth(this.prompt);
		if (width <= promptWidth) return [truncateToWidth(this.prompt, width, "")];
		const avail = width - promptWidth;
		const marker = this.focused ? CURSOR_MARKER : "";
		const pad = (text) => " ".repeat(Math.max(0, avail - visibleWidth(text)));
		if (this.value.length === 0 && this.placeholder) {
			const shown = truncateToWidth(this.placeholder, avail, "");
			const at = firstGrapheme(shown) || " ";
			const text = `${marker}${renderFakeCursor(this.placeholderStyle(at))}${this.placeholderStyle(shown.slice(at.length))}`;
			return [this.prompt + text + pad(text)];
		}
		const total = visibleWidth(this.value);
		let visible = this.value;
		let cursorAt = this.cursor;
		if (total >= avail) {
			const scroll = this.cursor === this.value.length ? avail - 1 : avail;
			const cursorCol = visibleWidth(this.value.slice(0, this.cursor));
			if (scroll > 0) {
				const half = Math.floor(scroll / 2);
				let start;
				if (cursorCol < half) start = 0;
				else if (cursorCol > Math.max(0, total - half)) start = Math.max(0, total - scroll);
				else start = cursorCol - half;
				visible = sliceByColumn(this.value, start, scroll, true);
				cursorAt = sliceByColumn(this.value, start, Math.max(0, cursorCol - start), true).length;
			} else {
				visible = "";
				cursorAt = 0;
			}
		}
		cursorAt = Math.min(cursorAt, visible.length);
		const at = firstGrapheme(visible.slice(cursorAt)) || " ";
		const text = `${visible.slice(0, cursorAt)}${marker}${renderFakeCursor(at)}${visible.slice(cursorAt + at.length)}`;
		return [this.prompt + text + pad(text)];
	}
}
