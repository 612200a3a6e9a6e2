// pi-tui's Editor: multi-line text between two borders, wrapped at word boundaries, with a
// cursor, Emacs keys, a kill ring, undo, bracketed paste (long pastes as `[paste #N …]`
// markers), history on the first and last rows, page keys and jump-to-character.
import { clampVisible, initAutocomplete, installAutocomplete } from "./editor-autocomplete.mjs";
import { pasteMarkers, scrollBorder, segments, wordWrapLine } from "./editor-layout.mjs";
import { keyIs, matchesKey } from "./keys.mjs";
import { KillRing, PasteCollector, printable, wordLeft, wordRight } from "./text-edit.mjs";
import { CURSOR_MARKER, renderFakeCursor, visibleWidth } from "./text.mjs";

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });
const firstGrapheme = (text) => {
	for (const { segment } of graphemes.segment(text)) return segment;
	return "";
};
const copy = (s) => ({ lines: [...s.lines], line: s.line, col: s.col });

export class Editor {
	constructor(tui, theme, options = {}) {
		this.tui = tui;
		this.theme = theme ?? {};
		this.borderColor = this.theme.borderColor ?? ((s) => s);
		this.focused = false;
		this.onSubmit = undefined;
		this.onChange = undefined;
		this.disableSubmit = false;
		this.state = { lines: [""], line: 0, col: 0 };
		this.paddingX = Math.max(0, options?.paddingX ?? 0);
		initAutocomplete(this, options?.autocompleteMaxVisible);
		this.scrollOffset = 0;
		this.pastes = new Map();
		this.pasteCounter = 0;
		this.paste = new PasteCollector();
		this.killRing = new KillRing();
		this.lastAction = null;
		this.undoStack = [];
		this.history = [];
		this.historyIndex = -1;
		this.historyDraft = undefined;
		this.jump = undefined;
		this.lastWidth = 80;
	}
	get capturesViewportInput() {
		return true;
	}
	getPaddingX() {
		return this.paddingX;
	}
	setPaddingX(padding) {
		this.paddingX = Math.max(0, Number(padding) || 0);
	}
	getAutocompleteMaxVisible() {
		return this.autocompleteMaxVisible;
	}
	setAutocompleteMaxVisible(maxVisible) {
		const next = clampVisible(maxVisible);
		if (next === this.autocompleteMaxVisible) return;
		this.autocompleteMaxVisible = next;
		this.tui?.requestRender?.();
	}
	addToHistory(text) {
		const t = String(text).trim();
		if (!t || this.history[0] === t) return;
		this.history.unshift(t);
		if (this.history.length > 100) this.history.pop();
	}
	invalidate() {}
	getText() {
		return this.state.lines.join("\n");
	}
	getLines() {
		return [...this.state.lines];
	}
	getCursor() {
		return { line: this.state.line, col: this.state.col };
	}
	getExpandedText() {
		let text = this.getText();
		for (const [id, content] of this.pastes) {
			const lines = content.split("\n").length;
			for (const marker of [`[paste #${id} +${lines} lines]`, `[paste #${id} ${[...content].length} chars]`]) text = text.split(marker).join(content);
		}
		return text;
	}
	setText(text) {
		this.cancelAutocomplete();
		const lines = String(text).replace(/\r\n?/g, "\n").split("\n");
		this.historyIndex = -1;
		this.lastAction = null;
		if (this.getText() !== lines.join("\n")) this.pushUndo();
		this.pastes.clear();
		this.pasteCounter = 0;
		this.state = { lines, line: lines.length - 1, col: lines[lines.length - 1].length };
		this.scrollOffset = 0;
		this.changed();
	}
	insertTextAtCursor(text) {
		if (!text) return;
		this.cancelAutocomplete();
		this.historyIndex = -1;
		this.lastAction = null;
		this.pushUndo();
		this.insertText(String(text).replace(/\r\n?/g, "\n"));
	}
	changed() {
		this.onChange?.(this.getText());
	}
	/** An undo step: the text and cursor, the paste registry (the same map, as pi-tui keeps it)
	 * and the paste counter. */
	pushUndo() {
		this.undoStack.push({ state: copy(this.state), pastes: this.pastes, pasteCounter: this.pasteCounter });
	}
	current() {
		return this.state.lines[this.state.line];
	}
	insertText(text) {
		const s = this.state;
		const rest = s.lines[s.line].slice(s.col);
		const parts = text.split("\n");
		s.lines[s.line] = s.lines[s.line].slice(0, s.col) + parts[0];
		let cur = s.line;
		for (const p of parts.slice(1)) s.lines.splice(++cur, 0, p);
		s.col = s.lines[cur].length;
		s.line = cur;
		s.lines[cur] += rest;
		this.changed();
	}
	typeText(text) {
		this.historyIndex = -1;
		if (/^\s+$/u.test(text) || this.lastAction !== "type") this.pushUndo();
		this.lastAction = "type";
		this.insertText(text);
		this.afterTyping(text);
	}
	pasteText(pasted) {
		this.cancelAutocomplete();
		this.lastAction = null;
		this.pushUndo();
		const normalized = pasted.replace(/\r\n/g, "\n").replace(/\r/g, "\n").replace(/\t/g, "    ");
		let text = [...normalized].filter((c) => c === "\n" || c.codePointAt(0) >= 32).join("");
		if (/^[/~.]/.test(text)) {
			const before = this.current().slice(0, this.state.col);
			if (/[\p{L}\p{N}_]$/u.test(before)) text = ` ${text}`;
		}
		const lines = text.split("\n").length;
		const chars = [...text].length;
		if (lines > 10 || chars > 1000) {
			const id = ++this.pasteCounter;
			this.pastes.set(id, text);
			this.insertText(lines > 10 ? `[paste #${id} +${lines} lines]` : `[paste #${id} ${chars} chars]`);
		} else this.insertText(text);
	}
	submit() {
		this.cancelAutocomplete();
		const result = this.getExpandedText().trim();
		this.state = { lines: [""], line: 0, col: 0 };
		this.pastes.clear();
		this.pasteCounter = 0;
		this.historyIndex = -1;
		this.scrollOffset = 0;
		this.undoStack = [];
		this.lastAction = null;
		this.changed();
		this.onSubmit?.(result);
	}
	kill(from, to, prepend) {
		const accumulate = this.lastAction === "kill";
		this.pushUndo();
		const s = this.state;
		const line = s.lines[s.line];
		this.killRing.push(line.slice(from, to), prepend, accumulate);
		s.lines[s.line] = line.slice(0, from) + line.slice(to);
		this.lastAction = "kill";
		s.col = from;
		this.changed();
	}
	navigateHistory(dir) {
		this.lastAction = null;
		if (this.history.length === 0) return;
		const next = this.historyIndex - dir;
		if (next < -1 || next >= this.history.length) return;
		if (this.historyIndex === -1 && next >= 0) {
			this.pushUndo();
			this.historyDraft = copy(this.state);
		}
		this.historyIndex = next;
		if (next === -1) {
			const draft = this.historyDraft;
			this.historyDraft = undefined;
			if (draft) {
				this.state = draft;
				this.scrollOffset = 0;
				this.changed();
			} else this.setTextKeepingHistory("");
			return;
		}
		this.setTextKeepingHistory(this.history[next]);
		if (dir < 0) {
			this.state.line = 0;
			this.state.col = 0;
		}
	}
	setTextKeepingHistory(text) {
		const lines = text.split("\n");
		this.state = { lines, line: lines.length - 1, col: lines[lines.length - 1].length };
		this.scrollOffset = 0;
		this.changed();
	}
	markers(line) {
		return pasteMarkers(line, (id) => this.pastes.has(id));
	}
	prevSegmentLength() {
		const before = this.current().slice(0, this.state.col);
		const segs = segments(before, this.markers(before));
		return segs.length > 0 ? segs[segs.length - 1][1].length : 0;
	}
	nextSegmentLength() {
		const line = this.current();
		const seg = segments(line, this.markers(line)).find(([i]) => i >= this.state.col);
		return seg ? seg[0] + seg[1].length - this.state.col : 0;
	}
	jumpTo(target, forward) {
		this.lastAction = null;
		const s = this.state;
		const order = [];
		if (forward) for (let i = s.line; i < s.lines.length; i++) order.push(i);
		else for (let i = s.line; i >= 0; i--) order.push(i);
		for (const li of order) {
			const line = s.lines[li];
			let found = -1;
			if (li !== s.line) found = forward ? line.indexOf(target) : line.lastIndexOf(target);
			else if (forward) found = line.indexOf(target, s.col + 1);
			else if (s.col > 0) found = line.lastIndexOf(target, s.col - 1);
			if (found !== -1) {
				s.line = li;
				s.col = found;
				return;
			}
		}
	}
	layoutWidth(width) {
		const px = Math.min(this.paddingX, Math.floor(Math.max(0, width - 1) / 2));
		const content = Math.max(1, width - px * 2);
		const layout = Math.max(1, content - (px > 0 ? 0 : 1));
		return { px, content, layout };
	}
	/** Every visual row: `{text, cursor}` (the cursor's offset in the row, or `undefined`). */
	layout(width) {
		const out = [];
		const s = this.state;
		s.lines.forEach((line, i) => {
			const chunks = wordWrapLine(line, width, this.markers(line));
			chunks.forEach((c, k) => {
				let cursor;
				if (i === s.line) {
					if (k === chunks.length - 1) cursor = s.col >= c.start ? s.col - c.start : undefined;
					else if (s.col >= c.start && s.col < c.end) cursor = Math.min(s.col - c.start, c.text.length);
				}
				out.push({ text: c.text, cursor, line: i, start: c.start });
			});
		});
		return out;
	}
	moveVertical(dir, width) {
		const rows = this.layout(width);
		const cur = rows.findIndex((r) => r.cursor !== undefined);
		if (cur === -1) return;
		const target = Math.max(0, Math.min(rows.length - 1, cur + dir));
		if (target !== cur) this.moveToRow(rows, cur, target);
	}
	/** Moves the cursor from row `cur` to row `target` (columns in UTF-16 units, as pi-tui); a
	 * cursor inside a paste marker or a wide grapheme goes to its start, remembering where it was. */
	moveToRow(rows, cur, target) {
		const from = rows[cur];
		const to = rows[target];
		const isLast = (i) => i === rows.length - 1 || rows[i + 1].line !== rows[i].line;
		let current = this.state.col - from.start;
		if (this.snappedFrom !== undefined) {
			const at = this.snappedFrom;
			const own = rows.filter((r) => r.line === from.line);
			const row = own.find((r, k) => at >= r.start && (k === own.length - 1 || at < own[k + 1].start)) ?? from;
			current = at - row.start;
		}
		const sourceMax = isLast(cur) ? from.text.length : Math.max(0, from.text.length - 1);
		const targetMax = isLast(target) ? to.text.length : Math.max(0, to.text.length - 1);
		const col = this.verticalColumn(current, sourceMax, targetMax);
		const line = this.state.lines[to.line];
		this.state.line = to.line;
		this.state.col = Math.min(to.start + col, line.length);
		for (const [index, seg] of segments(line, this.markers(line))) {
			if (index > this.state.col) break;
			if (seg.length <= 1 || this.state.col >= index + seg.length) continue;
			if (index < to.start && target > cur) {
				// Already passed on the way down: land on the first row after it.
				let next = target + 1;
				while (next < rows.length && rows[next].line === to.line && rows[next].start < index + seg.length) next++;
				if (next < rows.length) {
					this.moveToRow(rows, cur, next);
					return;
				}
			}
			this.snappedFrom = this.state.col;
			this.state.col = index;
			return;
		}
		this.snappedFrom = undefined;
	}
	/** The column a vertical move lands on: the one it started from is remembered across rows
	 * too short for it, until the cursor moves otherwise. */
	verticalColumn(current, sourceMax, targetMax) {
		const preferred = this.preferredColumn;
		if (preferred === undefined || current < sourceMax) {
			this.preferredColumn = targetMax < current ? current : undefined;
			return Math.min(current, targetMax);
		}
		if (targetMax < current || targetMax < preferred) {
			this.preferredColumn = preferred;
			return targetMax;
		}
		this.preferredColumn = undefined;
		return preferred;
	}
	pageSize() {
		return Math.max(5, Math.floor(((this.tui?.terminal?.rows ?? 24) * 3) / 10));
	}
	handleInput(data) {
		data = String(data);
		const rest = this.paste.feed(data, (content) => this.pasteText(content));
		if (rest === undefined) return;
		if (rest !== data) {
			this.handleInput(rest);
			return;
		}
		if (this.jump !== undefined) {
			const forward = this.jump;
			this.jump = undefined;
			if (keyIs(data, "tui.editor.jumpForward") || keyIs(data, "tui.editor.jumpBackward")) return;
			const target = printable(data);
			if (target !== undefined) {
				this.jumpTo(target, forward);
				return;
			}
		}
		if (keyIs(data, "tui.input.copy")) return;
		if (keyIs(data, "tui.editor.undo")) {
			this.undo();
			return;
		}
		if (this.autocompleteKey(data)) return;
		this.handleKey(data);
	}
	undo() {
		const last = this.undoStack.pop();
		if (!last) return;
		this.preferredColumn = undefined;
		this.snappedFrom = undefined;
		this.state = last.state;
		this.pastes = last.pastes;
		this.pasteCounter = last.pasteCounter;
		this.lastAction = null;
		this.changed();
	}
	handleKey(data) {
		const s = this.state;
		const preferred = this.preferredColumn;
		const snapped = this.snappedFrom;
		this.preferredColumn = undefined;
		this.snappedFrom = undefined;
		const vertical = ["tui.editor.cursorUp", "tui.editor.cursorDown", "tui.editor.pageUp", "tui.editor.pageDown"];
		if (vertical.some((id) => keyIs(data, id))) {
			this.preferredColumn = preferred;
			this.snappedFrom = snapped;
		}
		const { layout } = this.layoutWidth(this.lastWidth);
		const lineLength = this.current().length;
		const newLine =
			keyIs(data, "tui.input.newLine") ||
			(data.charCodeAt(0) === 10 && data.length > 1) ||
			data === "\x1b\r" ||
			data === "\x1b[13;2~" ||
			(data.length > 1 && data.includes("\x1b") && data.includes("\r")) ||
			data === "\n";
		if (keyIs(data, "tui.input.tab")) {
			if (!this.autocompleteState) this.handleTabCompletion();
		} else if (newLine) {
			this.cancelAutocomplete();
			this.lastAction = null;
			this.pushUndo();
			this.insertText("\n");
		} else if (keyIs(data, "tui.input.submit")) {
			if (!this.disableSubmit) this.submit();
		} else if (keyIs(data, "tui.editor.cursorUp")) this.cursorUp(layout);
		else if (keyIs(data, "tui.editor.cursorDown")) this.cursorDown(layout, lineLength);
		else if (keyIs(data, "tui.editor.deleteCharBackward")) {
			this.backspace();
			this.afterDeleting();
		} else if (keyIs(data, "tui.editor.deleteCharForward")) {
			this.lastAction = null;
			if (s.col < lineLength) {
				this.pushUndo();
				const line = this.current();
				s.lines[s.line] = line.slice(0, s.col) + line.slice(s.col + this.nextSegmentLength());
			} else if (s.line + 1 < s.lines.length) {
				this.pushUndo();
				s.lines[s.line] += s.lines.splice(s.line + 1, 1)[0];
			}
			this.changed();
			this.afterDeleting();
		} else if (this.killKey(data, lineLength)) {
			// handled
		} else if (keyIs(data, "tui.editor.cursorLeft")) {
			this.lastAction = null;
			if (s.col > 0) s.col -= this.prevSegmentLength();
			else if (s.line > 0) {
				s.line -= 1;
				s.col = this.current().length;
			}
			this.updateAutocomplete();
		} else if (keyIs(data, "tui.editor.cursorRight")) {
			this.lastAction = null;
			if (s.col < lineLength) s.col += this.nextSegmentLength();
			else if (s.line + 1 < s.lines.length) {
				s.line += 1;
				s.col = 0;
			}
			this.updateAutocomplete();
		} else if (keyIs(data, "tui.editor.cursorLineStart")) {
			this.lastAction = null;
			s.col = 0;
		} else if (keyIs(data, "tui.editor.cursorLineEnd")) {
			this.lastAction = null;
			s.col = lineLength;
		} else if (keyIs(data, "tui.editor.cursorWordLeft")) {
			this.lastAction = null;
			if (s.col === 0 && s.line > 0) {
				s.line -= 1;
				s.col = this.current().length;
			} else s.col = wordLeft(this.current(), s.col);
		} else if (keyIs(data, "tui.editor.cursorWordRight")) {
			this.lastAction = null;
			if (s.col >= lineLength && s.line + 1 < s.lines.length) {
				s.line += 1;
				s.col = 0;
			} else s.col = wordRight(this.current(), s.col);
		} else if (keyIs(data, "tui.editor.jumpForward")) this.jump = true;
		else if (keyIs(data, "tui.editor.jumpBackward")) this.jump = false;
		else if (keyIs(data, "tui.editor.pageUp") || keyIs(data, "tui.editor.pageDown")) {
			this.lastAction = null;
			const page = this.pageSize();
			this.moveVertical(keyIs(data, "tui.editor.pageUp") ? -page : page, layout);
		} else if (matchesKey(data, "shift+space")) this.typeText(" ");
		else {
			const text = printable(data);
			if (text !== undefined) this.typeText(text);
		}
	}
	/** The kill-ring keys (delete word or to the line's end, yank, yank-pop); whether `data` was one. */
	killKey(data, lineLength) {
		const s = this.state;
		if (keyIs(data, "tui.editor.deleteWordBackward")) {
			if (s.col > 0) this.kill(wordLeft(this.current(), s.col), s.col, true);
		} else if (keyIs(data, "tui.editor.deleteWordForward")) {
			if (s.col < lineLength) this.kill(s.col, wordRight(this.current(), s.col), false);
		} else if (keyIs(data, "tui.editor.deleteToLineStart")) {
			if (s.col > 0) this.kill(0, s.col, true);
		} else if (keyIs(data, "tui.editor.deleteToLineEnd")) {
			if (s.col < lineLength) this.kill(s.col, lineLength, false);
		} else if (keyIs(data, "tui.editor.yank")) {
			const text = this.killRing.peek();
			if (text !== undefined) {
				this.pushUndo();
				this.insertText(text);
				this.lastAction = "yank";
			}
		} else if (keyIs(data, "tui.editor.yankPop")) {
			if (this.lastAction === "yank" && this.killRing.length > 1 && !this.killRing.peek().includes("\n")) {
				this.pushUndo();
				const prev = Math.min(this.killRing.peek().length, s.col);
				const line = this.current();
				s.lines[s.line] = line.slice(0, s.col - prev) + line.slice(s.col);
				s.col -= prev;
				this.killRing.rotate();
				this.insertText(this.killRing.peek());
				this.lastAction = "yank";
			}
		} else return false;
		return true;
	}
	cursorUp(layout) {
		const s = this.state;
		const first = s.line === 0 && this.layout(layout).findIndex((r) => r.cursor !== undefined) === 0;
		if (first && (this.getText() === "" || this.historyIndex !== -1 || s.col === 0)) this.navigateHistory(-1);
		else if (first) s.col = 0;
		else this.moveVertical(-1, layout);
	}
	cursorDown(layout, lineLength) {
		const rows = this.layout(layout);
		const last = rows.length > 0 && rows[rows.length - 1].cursor !== undefined;
		if (last && this.historyIndex !== -1) this.navigateHistory(1);
		else if (last) this.state.col = lineLength;
		else this.moveVertical(1, layout);
	}
	backspace() {
		const s = this.state;
		this.historyIndex = -1;
		this.lastAction = null;
		if (s.col > 0) {
			this.pushUndo();
			const n = this.prevSegmentLength();
			const line = this.current();
			const removed = line.slice(s.col - n, s.col);
			s.lines[s.line] = line.slice(0, s.col - n) + line.slice(s.col);
			const marker = /^\[paste #(\d+)/.exec(removed);
			if (marker && pasteMarkers(removed, (id) => this.pastes.has(id))[0]?.[0] === 0) this.dropPaste(Number(marker[1]));
			s.col -= n;
		} else if (s.line > 0) {
			this.pushUndo();
			const removed = s.lines.splice(s.line, 1)[0];
			s.line -= 1;
			s.col = this.current().length;
			s.lines[s.line] += removed;
		}
		this.changed();
	}
	/** Forgets paste `id`: the pastes after it (and their markers) move down by one. */
	dropPaste(id) {
		this.pastes.delete(id);
		this.pasteCounter--;
		for (const other of [...this.pastes.keys()].filter((k) => k > id).sort((a, b) => a - b)) {
			this.pastes.set(other - 1, this.pastes.get(other));
			this.pastes.delete(other);
		}
		const re = /\[paste #(\d+)( \+\d+ lines| \d+ chars)?\]/g;
		this.state.lines = this.state.lines.map((line) =>
			line.replace(re, (whole, n, suffix) => (Number(n) <= id ? whole : `[paste #${Number(n) - 1}${suffix ?? ""}]`)),
		);
	}
	renderTopBorder(width, hidden) {
		return this.borderColor(hidden > 0 ? scrollBorder("↑", hidden, width) : "─".repeat(width));
	}
	renderBottomBorder(width, hidden) {
		return this.borderColor(hidden > 0 ? scrollBorder("↓", hidden, width) : "─".repeat(width));
	}
	render(width) {
		this.lastWidth = width;
		const { px, content, layout } = this.layoutWidth(width);
		const rows = this.layout(layout);
		const maxVisible = this.pageSize();
		const cursorRow = Math.max(0, rows.findIndex((r) => r.cursor !== undefined));
		if (cursorRow < this.scrollOffset) this.scrollOffset = cursorRow;
		else if (cursorRow >= this.scrollOffset + maxVisible) this.scrollOffset = cursorRow + 1 - maxVisible;
		this.scrollOffset = Math.min(this.scrollOffset, Math.max(0, rows.length - maxVisible));
		const visible = rows.slice(this.scrollOffset, this.scrollOffset + maxVisible);
		const pad = " ".repeat(px);
		const marker = this.focused ? CURSOR_MARKER : "";
		const out = [this.renderTopBorder(width, this.scrollOffset)];
		for (const row of visible) {
			let display = row.text;
			let w = visibleWidth(row.text);
			let cursorInPadding = false;
			if (row.cursor !== undefined) {
				const at = Math.min(row.cursor, row.text.length);
				const after = row.text.slice(at);
				const first = firstGrapheme(after);
				if (first) display = `${row.text.slice(0, at)}${marker}${renderFakeCursor(first)}${after.slice(first.length)}`;
				else {
					display = `${row.text.slice(0, at)}${marker}${renderFakeCursor(" ")}`;
					w += 1;
					cursorInPadding = w > content && px > 0;
				}
			}
			const right = cursorInPadding ? pad.slice(1) : pad;
			out.push(pad + display + " ".repeat(Math.max(0, content - w)) + right);
		}
		out.push(this.renderBottomBorder(width, rows.length - (this.scrollOffset + visible.length)));
		if (this.autocompleteState && this.autocompleteList) {
			for (const line of this.autocompleteList.render(content)) out.push(pad + line + " ".repeat(Math.max(0, content - visibleWidth(line))) + pad);
		}
		return out;
	}
}

installAutocomplete(Editor);
