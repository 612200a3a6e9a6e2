// pi-tui's SelectList.
import { matchesKey } from "./keys.mjs";
import { truncateToWidth, visibleWidth } from "./text.mjs";

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

