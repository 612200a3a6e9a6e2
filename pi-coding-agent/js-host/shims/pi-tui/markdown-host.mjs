// Connects the shim's Markdown to pi-rs: its lines are asked for with `ui.renderMarkdown`; when
// they come, the drawn components render again and pi-rs draws a frame. Imported by the host only
// (the shim itself runs without it, as in tests/fixtures/jstui/compare.mjs).
import { sweep } from "../../components.mjs";
import { errorMessage, rpc } from "../../rpc.mjs";
import { setMarkdownHost } from "./markdown.mjs";

setMarkdownHost({
	render: (tree, width) => rpc.call("ui.renderMarkdown", { tree, width }),
	changed: () => {
		sweep();
		rpc.send({ method: "ui.requestRender", params: {} });
	},
	failed: (error) => rpc.send({ method: "pi.reportError", params: { extensionPath: "", event: "markdown", error: errorMessage(error) } }),
});
