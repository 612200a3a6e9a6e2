// pi-tui's Loader (a spinner and a message, one frame every 80 ms) and CancellableLoader (Escape
// aborts its signal).
import { Text } from "./basic.mjs";
import { keyIs } from "./keys.mjs";

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const INTERVAL_MS = 80;

export class Loader extends Text {
	constructor(ui, spinnerColorFn = (s) => s, messageColorFn = (s) => s, message = "Loading...", indicator) {
		super("", 1, 0);
		this.ui = ui;
		this.spinnerColorFn = spinnerColorFn ?? ((s) => s);
		this.messageColorFn = messageColorFn ?? ((s) => s);
		this.message = message;
		this.intervalId = null;
		this.applyIndicator(indicator);
		this.start();
	}
	applyIndicator(indicator) {
		this.frames = Array.isArray(indicator?.frames) ? [...indicator.frames] : FRAMES;
		this.intervalMs = indicator?.intervalMs > 0 ? indicator.intervalMs : INTERVAL_MS;
		this.verbatim = Array.isArray(indicator?.frames);
		this.currentFrame = 0;
	}
	render(width) {
		return ["", ...super.render(width)];
	}
	start() {
		this.updateDisplay();
		this.restartAnimation();
	}
	stop() {
		if (this.intervalId) {
			clearInterval(this.intervalId);
			this.intervalId = null;
		}
	}
	setMessage(message) {
		this.message = message;
		this.updateDisplay();
	}
	setIndicator(indicator) {
		this.applyIndicator(indicator);
		this.start();
	}
	invalidate() {
		super.invalidate();
		this.updateDisplay();
	}
	restartAnimation() {
		this.stop();
		if (this.frames.length <= 1) return;
		this.intervalId = setInterval(() => {
			this.currentFrame = (this.currentFrame + 1) % this.frames.length;
			this.updateDisplay();
		}, this.intervalMs);
	}
	getRenderedIndicator() {
		if (this.frames.length === 0) return "";
		const frame = this.frames[this.currentFrame % this.frames.length];
		return this.verbatim ? frame : this.spinnerColorFn(frame);
	}
	updateDisplay() {
		const indicator = this.getRenderedIndicator();
		this.setText(indicator ? `${indicator} ${this.messageColorFn(this.message)}` : this.messageColorFn(this.message));
		this.ui?.requestRender?.();
	}
}

export class CancellableLoader extends Loader {
	constructor(...args) {
		super(...args);
		this.abortController = new AbortController();
		this.onAbort = undefined;
	}
	get signal() {
		return this.abortController.signal;
	}
	get aborted() {
		return this.abortController.signal.aborted;
	}
	handleInput(data) {
		if (keyIs(data, "tui.select.cancel")) {
			this.abortController.abort();
			this.onAbort?.();
		}
	}
	dispose() {
		this.stop();
	}
}
