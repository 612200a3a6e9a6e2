// pi-rs's @earendil-works/pi-tui for extensions: components that render to lines, drawn and
// edited as pi-tui 1.6.0's. Trees of Text, Box, Container, Spacer and Markdown cross to pi-rs,
// which draws them with its own pi-tui; any other component (SelectList, Input, Editor, a custom
// class with render(width)) is rendered here, to lines. The pieces live in ./pi-tui/.
export { CombinedAutocompleteProvider } from "./pi-tui/autocomplete.mjs";
export { Box, Container, Spacer, Text, TruncatedText, toTree } from "./pi-tui/basic.mjs";
export { Editor } from "./pi-tui/editor.mjs";
export { fuzzyFilter, fuzzyMatch } from "./pi-tui/fuzzy.mjs";
export { Image, setImageTranscoder } from "./pi-tui/image.mjs";
export {
	allocateImageId,
	calculateImageRows,
	deleteAllKittyImages,
	deleteKittyImage,
	detectCapabilities,
	encodeITerm2,
	encodeKitty,
	getCapabilities,
	getCellDimensions,
	getGifDimensions,
	getImageDimensions,
	getJpegDimensions,
	getPngDimensions,
	getTerminalColorMode,
	getWebpDimensions,
	hyperlink,
	imageFallback,
	renderImage,
	resetCapabilitiesCache,
	setCapabilities,
	setCapabilityOverrides,
	setCellDimensions,
} from "./pi-tui/terminal-image.mjs";
export { Input } from "./pi-tui/input.mjs";
export {
	decodeKittyPrintable,
	getKeybindings,
	isKeyRelease,
	isKeyRepeat,
	isKittyProtocolActive,
	Key,
	KeybindingsManager,
	matchesKey,
	parseKey,
	setKeybindings,
	setKittyProtocolActive,
	TUI_KEYBINDINGS,
} from "./pi-tui/keys.mjs";
export { CancellableLoader, Loader } from "./pi-tui/loader.mjs";
export { renderLatex } from "./pi-tui/latex.mjs";
export { Markdown } from "./pi-tui/markdown.mjs";
export { dispatchMouseEvent, MouseRegion, retargetMouseEvent } from "./pi-tui/mouse.mjs";
export { SelectList } from "./pi-tui/select-list.mjs";
export { SettingsList } from "./pi-tui/settings-list.mjs";
export {
	CURSOR_MARKER,
	renderFakeCursor,
	sampleStyle,
	sliceByColumn,
	truncateToWidth,
	visibleWidth,
	wrapTextWithAnsi,
} from "./pi-tui/text.mjs";
