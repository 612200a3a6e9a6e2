// pi-rs's @earendil-works/pi-agent-core for extensions: types only at run time, plus the default
// message filter.
export function defaultConvertToLlm(messages) {
	return messages.filter((m) => m.role === "system" || m.role === "user" || m.role === "assistant" || m.role === "toolResult");
}
export default { defaultConvertToLlm };
