// pi-tui's SettingsList: `label  value` rows, Enter or Space cycles a value or opens an item's
// submenu, the selected item's description under the list, an optional search line.
import { fuzzyFilter } from "./fuzzy.mjs";
import { Input } from "./input.mjs";
import { keyIs } from "./keys.mjs";
import { truncateToWidth, visibleWidth, wrapTextWithAnsi } from "./text.mjs";

export class SettingsList {
	constructor(items, maxVisible, theme, onChange, onCancel, options = {}) {
		this.capturesViewportInput = true;
		this.items = items ?? [];
		this.filteredItems = this.items;
		this.maxVisible = maxVisible;
		this.theme = theme;
		this.onChange = onChange ?? (() => {});
		this.onCancel = onCancel ?? (() => {});
		this.searchEnabled = Boolean(options?.enableSearch);
		this.searchInput = this.searchEnabled ? new Input() : undefined;
		this.selectedIndex = 0;
		this.submenu = null;
		this.submenuIndex = null;
		this.navigateAfterClose = null;
	}
	updateValue(id, newValue) {
		const item = this.items.find((i) => i.id === id);
		if (item) item.currentValue = newValue;
	}
	selectItem(id) {
		const at = this.shown().findIndex((i) => i.id === id);
		if (at !== -1) this.selectedIndex = at;
	}
	invalidate() {
		this.submenu?.invalidate?.();
	}
	shown() {
		return this.searchEnabled ? this.filteredItems : this.items;
	}
	range(count) {
		const start = Math.max(0, Math.min(this.selectedIndex - Math.floor(this.maxVisible / 2), count - this.maxVisible));
		return [start, Math.min(start + this.maxVisible, count)];
	}
	hint(lines, width) {
		const text = this.searchEnabled ? "  Type to search · Enter/Space to change · Esc to cancel" : "  Enter/Space to change · Esc to cancel";
		lines.push("", truncateToWidth(this.theme.hint(text), width));
	}
	render(width) {
		if (this.submenu) return this.submenu.render(width);
		const t = this.theme;
		const lines = [];
		if (this.searchInput) lines.push(...this.searchInput.render(width), "");
		if (this.items.length === 0) {
			lines.push(t.hint("  No settings available"));
			if (this.searchEnabled) this.hint(lines, width);
			return lines;
		}
		const shown = this.shown();
		if (shown.length === 0) {
			lines.push(truncateToWidth(t.hint("  No matching settings"), width));
			this.hint(lines, width);
			return lines;
		}
		const [start, end] = this.range(shown.length);
		const labelWidth = Math.min(36, Math.max(...this.items.map((i) => visibleWidth(i.label))));
		for (let i = start; i < end; i++) {
			const item = shown[i];
			const selected = i === this.selectedIndex;
			const prefix = selected ? t.cursor : "  ";
			const label = t.label(item.label + " ".repeat(Math.max(0, labelWidth - visibleWidth(item.label))), selected);
			const valueWidth = width - (visibleWidth(prefix) + labelWidth + 2) - 2;
			const value = t.value(truncateToWidth(item.currentValue, valueWidth, ""), selected);
			lines.push(truncateToWidth(`${prefix}${label}  ${value}`, width));
		}
		if (start > 0 || end < shown.length) lines.push(t.hint(truncateToWidth(`  (${this.selectedIndex + 1}/${shown.length})`, width - 2, "")));
		const description = shown[this.selectedIndex]?.description;
		if (description) {
			lines.push("");
			for (const line of wrapTextWithAnsi(description, width - 4)) lines.push(t.description(`  ${line}`));
		}
		this.hint(lines, width);
		return lines;
	}
	handleInput(data) {
		if (this.submenu) {
			this.submenu.handleInput?.(data);
			return;
		}
		const count = this.shown().length;
		const page = keyIs(data, "tui.select.pageUp") ? -1 : keyIs(data, "tui.select.pageDown") ? 1 : 0;
		if (keyIs(data, "tui.select.up")) {
			if (count > 0) this.selectedIndex = this.selectedIndex === 0 ? count - 1 : this.selectedIndex - 1;
		} else if (keyIs(data, "tui.select.down")) {
			if (count > 0) this.selectedIndex = this.selectedIndex === count - 1 ? 0 : this.selectedIndex + 1;
		} else if (page !== 0) {
			if (count > 0) this.selectedIndex = Math.max(0, Math.min(count - 1, this.selectedIndex + page * this.maxVisible));
		} else if (keyIs(data, "tui.select.confirm") || (data === " " && (!this.searchInput || this.searchInput.getValue().length === 0))) {
			this.activate();
		} else if (keyIs(data, "tui.select.cancel")) {
			this.onCancel();
		} else if (this.searchInput) {
			const before = this.searchInput.getValue();
			this.searchInput.handleInput(data);
			const query = this.searchInput.getValue();
			if (query !== before) {
				this.filteredItems = fuzzyFilter(this.items, query, (item) => item.label);
				this.selectedIndex = 0;
			}
		}
	}
	activate() {
		const item = this.shown()[this.selectedIndex];
		if (!item) return;
		if (item.submenu) {
			this.submenuIndex = this.selectedIndex;
			this.submenu = item.submenu(item.currentValue, (value, options) => {
				if (value !== undefined) {
					item.currentValue = value;
					this.onChange(item.id, value);
				}
				if (options?.navigateTo) this.navigateAfterClose = options.navigateTo;
				this.closeSubmenu();
			});
		} else if (item.values?.length > 0) {
			const next = item.values[(item.values.indexOf(item.currentValue) + 1) % item.values.length];
			item.currentValue = next;
			this.onChange(item.id, next);
		}
	}
	closeSubmenu() {
		this.submenu = null;
		if (this.navigateAfterClose !== null) {
			const id = this.navigateAfterClose;
			this.navigateAfterClose = null;
			this.submenuIndex = null;
			this.selectItem(id);
			this.activate();
		} else if (this.submenuIndex !== null) {
			this.selectedIndex = this.submenuIndex;
			this.submenuIndex = null;
		}
	}
}
