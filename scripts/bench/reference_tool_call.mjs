// The reference's in-process cost of one tool_call with one handler (pi 1.6.0's ExtensionRunner),
// for beside `cargo bench --bench js_extensions`. Run: anchor.sh node scripts/bench/reference_tool_call.mjs
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { execFileSync } from "node:child_process";

const root = execFileSync("/work/shared/tools/anchor.sh", ["path"]).toString().trim();
const pkg = path.join(root, "node_modules/@earendil-works/pi-coding-agent/dist/core/extensions");
const { loadExtensions } = await import(path.join(pkg, "loader.js"));
const { ExtensionRunner } = await import(path.join(pkg, "runner.js"));
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-bench-"));
const file = path.join(dir, "bench.ts");
fs.writeFileSync(file, `export default function (pi) {\n  pi.on("tool_call", (event) => (event.toolName === "bash" ? { block: true, reason: "no" } : undefined));\n}\n`);
let t0 = performance.now();
const loaded = await loadExtensions([file], dir);
const loadMs = performance.now() - t0;
const runner = new ExtensionRunner(loaded.extensions, loaded.runtime, dir, { getEntries: () => [], getBranch: () => [] }, { find: () => undefined, getAll: () => [] });
const event = () => ({ type: "tool_call", toolCallId: "c1", toolName: "read", input: {} });
for (let i = 0; i < 2000; i++) await runner.emitToolCall(event());
const n = 20000;
t0 = performance.now();
for (let i = 0; i < n; i++) await runner.emitToolCall(event());
const perCall = ((performance.now() - t0) * 1000) / n;
console.log(JSON.stringify({ loadOneExtensionMs: Number(loadMs.toFixed(1)), toolCallOneHandlerUs: Number(perCall.toFixed(2)) }));
