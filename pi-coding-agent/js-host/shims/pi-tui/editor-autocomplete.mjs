// pi-tui 1.6.0's Editor autocomplete, installed on the shim's Editor: a provider's suggestions
// (`getSuggestions`, awaited, with an AbortSignal; stale answers dropped) shown as a SelectList
// under the editor. It opens on `/` at the start of the message, on a trigger character (`@`, `#`,
// and the provider's `triggerCharacters`) at a token boundary, on letters typed in those contexts,
// and on Tab (forced file completion outside a command name; a single forced match is applied at
// once). Arrows and page keys move in the list, Tab and Enter apply `applyCompletion` (Enter on a
// command name submits too), Escape closes it; typing, deleting and moving sideways ask again.
// `@…` and the extra trigger characters wait pi-tui's 20 ms debounce before asking.
import { keyIs } from "./keys.mjs";
import { SelectList } from "./select-list.mjs";

const DEBOUNCE_MS = 20;
const DEFAULT_TRIGGERS = ["@", "#"];
const SLASH_LAYOUT = { minPrimaryColumnWidth: 12, maxPrimaryColumnWidth: 32 };

const cjk = "[\\p{Script_Extensions=Han}\\p{Script_Extensions=Hiragana}\\p{Script_Extensions=Katakana}\\p{Script_Extensions=Hangul}\\p{Script_Extensions=Bopomofo}]";
const cjkBreak = new RegExp(cjk, "u");
const separator = `(?:\\s|(?:(?:(?=\\p{Punctuation})${cjk}|[，．：；！？（）［］｛｝“”‘’…—])))`;
const unquotedSuffix = `(?:(?!${separator}).)*`;
const tokenStart = `(?:^|${separator})[([{<\`]*`;
const escapeClass = (c) => c.replace(/[\\^$.*+?()[\]{}|-]/g, "\\$&");
const triggerPattern = (chars) => new RegExp(`${tokenStart}(?:@"[^"]*|[${chars.map(escapeClass).join("")}]${unquotedSuffix})$`, "u");
const debouncePattern = (chars) => {
	const others = chars.filter((c) => c !== "@").map(escapeClass).join("");
	return new RegExp(`${tokenStart}(?:@(?:"[^"]*|${unquotedSuffix})|[${others}]${unquotedSuffix})$`, "u");
};

/** The autocomplete state of a new Editor. */
export function initAutocomplete(editor, maxVisible) {
	editor.autocompleteProvider = undefined;
	editor.autocompleteState = null;
	editor.autocompleteList = undefined;
	editor.autocompletePrefix = "";
	editor.autocompleteStartToken = 0;
	editor.autocompleteRequestId = 0;
	editor.autocompleteRequestTask = Promise.resolve();
	editor.autocompleteMaxVisible = clampVisible(maxVisible ?? 5);
	setTriggers(editor, []);
}

export function clampVisible(n) {
	return Number.isFinite(n) ? Math.max(3, Math.min(20, Math.floor(n))) : 5;
}

function setTriggers(editor, chars) {
	const next = [...DEFAULT_TRIGGERS];
	for (const c of chars) if (c.length === 1 && c !== "/" && !/\s/.test(c) && !next.includes(c)) next.push(c);
	editor.autocompleteTriggerCharacters = next;
	editor.autocompleteTriggerPattern = triggerPattern(next);
	editor.autocompleteDebouncePattern = debouncePattern(next);
}

const methods = {
	setAutocompleteProvider(provider) {
		this.cancelAutocomplete();
		this.autocompleteProvider = provider;
		setTriggers(this, provider?.triggerCharacters ?? []);
	},
	isShowingAutocomplete() {
		return this.autocompleteState !== null;
	},
	beforeCursor() {
		return (this.state.lines[this.state.line] || "").slice(0, this.state.col);
	},
	isInSlashCommandContext(text) {
		return this.state.line === 0 && text.trimStart().startsWith("/");
	},
	isInSlashCommandNameContext(text) {
		return this.isInSlashCommandContext(text) && !text.trimStart().includes(" ");
	},
	/** The keys an open list takes: whether `data` was one (Enter on a command name applies the
	 * completion, then is handled as a key, which submits). */
	autocompleteKey(data) {
		if (!this.autocompleteState || !this.autocompleteList) return false;
		if (keyIs(data, "tui.select.cancel")) {
			this.cancelAutocomplete();
			return true;
		}
		if (["tui.select.up", "tui.select.down", "tui.select.pageUp", "tui.select.pageDown"].some((id) => keyIs(data, id))) {
			this.autocompleteList.handleInput(data);
			return true;
		}
		const tab = keyIs(data, "tui.input.tab");
		if (!tab && !keyIs(data, "tui.select.confirm")) return false;
		const selected = this.autocompleteList.getSelectedItem();
		if (!selected || !this.autocompleteProvider) return tab;
		const submits = !tab && this.autocompletePrefix.startsWith("/") && this.isInSlashCommandNameContext(this.beforeCursor());
		this.applyCompletionResult(selected, this.autocompletePrefix);
		this.cancelAutocomplete();
		if (submits) return false;
		this.changed();
		return true;
	},
	applyCompletionResult(item, prefix) {
		this.pushUndo();
		this.lastAction = null;
		const s = this.state;
		const result = this.autocompleteProvider.applyCompletion(s.lines, s.line, s.col, item, prefix);
		this.state = { lines: result.lines, line: result.cursorLine, col: result.cursorCol };
		this.preferredColumn = undefined;
	},
	/** After `text` was typed: open the list where pi-tui opens it, or ask the open one again. */
	afterTyping(text) {
		if (this.autocompleteState) {
			this.updateAutocomplete();
			return;
		}
		const before = this.beforeCursor();
		if (text === "/" && this.state.line === 0 && (before.trim() === "" || before.trim() === "/")) this.requestAutocomplete({});
		else if (this.autocompleteTriggerCharacters.includes(text)) {
			if (this.autocompleteTriggerPattern.test(before)) this.requestAutocomplete({});
		} else if (/[a-zA-Z0-9.\-_]/.test(text) || cjkBreak.test(text)) {
			if (this.isInSlashCommandContext(before) || this.autocompleteTriggerPattern.test(before)) this.requestAutocomplete({});
		}
	},
	/** After a deletion: ask the open list again, or reopen it in a completable context. */
	afterDeleting() {
		if (this.autocompleteState) {
			this.updateAutocomplete();
			return;
		}
		const before = this.beforeCursor();
		if (this.isInSlashCommandContext(before) || this.autocompleteTriggerPattern.test(before)) this.requestAutocomplete({});
	},
	handleTabCompletion() {
		if (!this.autocompleteProvider) return;
		if (this.isInSlashCommandNameContext(this.beforeCursor())) this.requestAutocomplete({ explicitTab: true });
		else this.requestAutocomplete({ force: true, explicitTab: true });
	},
	requestAutocomplete(options) {
		const provider = this.autocompleteProvider;
		if (!provider) return;
		const s = this.state;
		if (options.force && provider.shouldTriggerFileCompletion && !provider.shouldTriggerFileCompletion(s.lines, s.line, s.col)) return;
		this.cancelAutocompleteRequest();
		const token = ++this.autocompleteStartToken;
		const debounce = !options.explicitTab && !options.force && this.autocompleteDebouncePattern.test(this.beforeCursor());
		if (debounce) {
			this.autocompleteDebounceTimer = setTimeout(() => {
				this.autocompleteDebounceTimer = undefined;
				void this.startAutocompleteRequest(token, options);
			}, DEBOUNCE_MS);
			return;
		}
		void this.startAutocompleteRequest(token, options);
	},
	async startAutocompleteRequest(token, options) {
		const previous = this.autocompleteRequestTask;
		this.autocompleteRequestTask = (async () => {
			await previous;
			if (token !== this.autocompleteStartToken || !this.autocompleteProvider) return;
			const controller = new AbortController();
			this.autocompleteAbort = controller;
			const id = ++this.autocompleteRequestId;
			const snapshot = { text: this.getText(), line: this.state.line, col: this.state.col };
			await this.runAutocompleteRequest(id, controller, snapshot, options);
		})();
		await this.autocompleteRequestTask;
	},
	async runAutocompleteRequest(id, controller, snapshot, options) {
		const provider = this.autocompleteProvider;
		if (!provider) return;
		const s = this.state;
		const suggestions = await provider.getSuggestions(s.lines, s.line, s.col, { signal: controller.signal, force: options.force });
		const current =
			!controller.signal.aborted && id === this.autocompleteRequestId && this.getText() === snapshot.text && this.state.line === snapshot.line && this.state.col === snapshot.col;
		if (!current) return;
		this.autocompleteAbort = undefined;
		if (!suggestions || !Array.isArray(suggestions.items) || suggestions.items.length === 0) {
			this.cancelAutocomplete();
			this.tui?.requestRender?.();
			return;
		}
		if (options.force && options.explicitTab && suggestions.items.length === 1) {
			this.applyCompletionResult(suggestions.items[0], suggestions.prefix);
			this.changed();
			this.tui?.requestRender?.();
			return;
		}
		this.autocompletePrefix = suggestions.prefix;
		this.autocompleteList = this.createAutocompleteList(suggestions.prefix, suggestions.items);
		const best = bestMatch(suggestions.items, suggestions.prefix);
		if (best >= 0) this.autocompleteList.setSelectedIndex(best);
		this.autocompleteState = options.force ? "force" : "regular";
		this.tui?.requestRender?.();
	},
	createAutocompleteList(prefix, items) {
		const list = new SelectList(items, this.autocompleteMaxVisible, this.theme.selectList, prefix.startsWith("/") ? SLASH_LAYOUT : undefined);
		list.onSelect = (selected) => {
			if (!this.autocompleteProvider) return;
			this.applyCompletionResult(selected, this.autocompletePrefix);
			this.cancelAutocomplete();
			this.changed();
		};
		return list;
	},
	cancelAutocompleteRequest() {
		this.autocompleteStartToken += 1;
		if (this.autocompleteDebounceTimer) {
			clearTimeout(this.autocompleteDebounceTimer);
			this.autocompleteDebounceTimer = undefined;
		}
		this.autocompleteAbort?.abort();
		this.autocompleteAbort = undefined;
	},
	cancelAutocomplete() {
		this.cancelAutocompleteRequest();
		this.autocompleteState = null;
		this.autocompleteList = undefined;
		this.autocompletePrefix = "";
	},
	updateAutocomplete() {
		if (!this.autocompleteState || !this.autocompleteProvider) return;
		this.requestAutocomplete({ force: this.autocompleteState === "force" });
	},
};

/** The index of the item whose value is `prefix`, else the first that starts with it, else -1. */
function bestMatch(items, prefix) {
	if (!prefix) return -1;
	let first = -1;
	for (let i = 0; i < items.length; i++) {
		if (items[i].value === prefix) return i;
		if (first === -1 && items[i].value.startsWith(prefix)) first = i;
	}
	return first;
}

/** Adds the autocomplete methods to `Editor`. */
export function installAutocomplete(Editor) {
	for (const [name, fn] of Object.entries(methods)) Object.defineProperty(Editor.prototype, name, { value: fn, writable: true, configurable: true });
}
