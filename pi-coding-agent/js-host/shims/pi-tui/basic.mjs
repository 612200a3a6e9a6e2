// pi-tui's layout components: Container, Text, TruncatedText, Box, Spacer; the tree pi-rs draws.
import { dispatchMouseToChildren } from "./mouse.mjs";
import { padLine, sampleStyle, truncateToWidth, visibleWidth, wrapTextWithAnsi } from "./text.mjs";

export class Container {
	constructor() {
		this.children = [];
	}
	addChild(child) {
		this.children.push(child);
	}
	removeChild(child) {
		const i = this.children.indexOf(child);
		if (i !== -1) this.children.splice(i, 1);
	}
	clear() {
		this.children = [];
	}
	invalidate() {
		for (const c of this.children) c.invalidate?.();
	}
	render(width) {
		return this.children.flatMap((c) => c.render(width));
	}
	handleMouse(event) {
		const result = dispatchMouseToChildren(this.children, event);
		if (result?.focus && this.handleInput) return { ...result, focusTarget: this };
		return result;
	}
	toTree(width) {
		return { type: "container", children: this.children.map((c) => toTree(c, width)) };
	}
}

export class Text {
	constructor(text = "", paddingX = 1, paddingY = 1, customBgFn) {
		this.text = text;
		this.paddingX = paddingX;
		this.paddingY = paddingY;
		this.customBgFn = customBgFn;
	}
	setText(text) {
		this.text = text;
	}
	setCustomBgFn(fn) {
		this.customBgFn = fn;
	}
	invalidate() {}
	render(width) {
		if (!this.text || this.text.trim() === "") return [];
		const px = Math.min(this.paddingX, Math.floor(Math.max(0, width - 1) / 2));
		const contentWidth = Math.max(1, width - px * 2);
		const margin = " ".repeat(px);
		const blank = padLine("", width, this.customBgFn);
		const lines = wrapTextWithAnsi(this.text.replace(/\t/g, "   "), contentWidth).map((l) => padLine(margin + l + margin, width, this.customBgFn));
		return [...Array(this.paddingY).fill(blank), ...lines, ...Array(this.paddingY).fill(blank)];
	}
	toTree() {
		return { type: "text", text: String(this.text ?? ""), paddingX: this.paddingX, paddingY: this.paddingY, bg: sampleStyle(this.customBgFn) };
	}
}

export class TruncatedText {
	constructor(text = "", paddingX = 0, paddingY = 0) {
		this.text = text;
		this.paddingX = paddingX;
		this.paddingY = paddingY;
	}
	setText(text) {
		this.text = text;
	}
	invalidate() {}
	render(width) {
		const inner = Math.max(1, width - this.paddingX * 2);
		const first = String(this.text).split("\n")[0];
		const line = " ".repeat(this.paddingX) + truncateToWidth(first, inner);
		const blank = " ".repeat(width);
		return [...Array(this.paddingY).fill(blank), padLine(line, width), ...Array(this.paddingY).fill(blank)];
	}
}

export class Box extends Container {
	constructor(paddingX = 1, paddingY = 1, bgFn) {
		super();
		this.paddingX = paddingX;
		this.paddingY = paddingY;
		this.bgFn = bgFn;
	}
	setBgFn(fn) {
		this.bgFn = fn;
	}
	render(width) {
		if (this.children.length === 0) return [];
		const contentWidth = Math.max(1, width - this.paddingX * 2);
		const left = " ".repeat(this.paddingX);
		const childLines = this.children.flatMap((c) => c.render(contentWidth));
		if (childLines.length === 0) return [];
		const blank = padLine("", width, this.bgFn);
		return [
			...Array(this.paddingY).fill(blank),
			...childLines.map((l) => padLine(left + l, width, this.bgFn)),
			...Array(this.paddingY).fill(blank),
		];
	}
	toTree(width) {
		const inner = Math.max(1, width - this.paddingX * 2);
		return {
			type: "box",
			paddingX: this.paddingX,
			paddingY: this.paddingY,
			bg: sampleStyle(this.bgFn),
			children: this.children.map((c) => toTree(c, inner)),
		};
	}
}

export class Spacer {
	constructor(lines = 1) {
		this.lines = lines;
	}
	setLines(lines) {
		this.lines = lines;
	}
	invalidate() {}
	render() {
		return Array(this.lines).fill("");
	}
	toTree() {
		return { type: "spacer", lines: this.lines };
	}
}

/** The classes whose instances cross as trees (a subclass may render differently: as lines). */
export const TREE_CLASSES = new Set();

/** A component as pi-rs draws it: known components as a tree, others as their lines. */
export function toTree(component, width) {
	if (component && typeof component.toTree === "function") {
		const own = Object.getPrototypeOf(component).constructor;
		if (TREE_CLASSES.has(own)) return component.toTree(width);
	}
	const lines = component?.render?.(width) ?? [];
	return { type: "lines", lines: lines.map(String) };
}


for (const c of [Text, Box, Container, Spacer]) TREE_CLASSES.add(c);
