// pi-tui's Markdown. PLACEHOLDER
import { Text, TREE_CLASSES } from "./basic.mjs";
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
TREE_CLASSES.add(Markdown);
