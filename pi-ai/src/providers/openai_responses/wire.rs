//! The Responses input items as borrowed, typed wire structs (pi's `convertResponsesMessages`),
//! serialized straight to bytes in pi's key order.

use std::borrow::Cow;

use serde_json::{Value, json};

use super::request::normalize_tool_call_id;
use crate::handoff::HandedOff;
use crate::http::json_out::{Obj, WriteJson, write_serde, write_str};
use crate::http::shared::{data_url, short_hash, transform_for_model_borrowed};
use crate::transcript::{render_system_message_update, system_message_text};
use crate::types::{AssistantBlock, AssistantMessage, Content, Message, Model, UserBlock};

/// `{type: "input_text", text}` or `{type: "input_image", detail: "auto", image_url}`.
pub(crate) enum InputPart<'a> {
    Text(Cow<'a, str>),
    Image(String),
}

/// A `function_call_output`'s `output`: a string or input parts.
pub(crate) enum Output<'a> {
    Text(Cow<'a, str>),
    Parts(Vec<InputPart<'a>>),
}

/// One input item.
pub(crate) enum Item<'a> {
    /// `{role, content}` (system or developer instructions).
    Instructions { role: &'static str, text: String },
    /// `{role: "user", content: [parts]}`.
    User(Vec<InputPart<'a>>),
    /// A replayed reasoning item, as stored.
    Raw(Value),
    /// `{type: "message", role: "assistant", content: [output_text], status: "completed", id, phase?}`.
    Message { text: &'a str, id: String, phase: Option<String> },
    /// `{type: "function_call", id?, call_id, name, arguments, namespace?}`.
    FunctionCall { id: Option<&'a str>, call_id: &'a str, name: &'a str, arguments: String, namespace: Option<&'a str> },
    /// `{type: "function_call_output", call_id, output}`.
    FunctionCallOutput { call_id: &'a str, output: Output<'a> },
    /// `{type: "custom_tool_call", id?, call_id, name, input, namespace?}` (a grammar tool's call).
    CustomToolCall { id: Option<&'a str>, call_id: &'a str, name: &'a str, input: &'a str, namespace: Option<&'a str> },
    /// `{type: "custom_tool_call_output", call_id, output}`.
    CustomToolCallOutput { call_id: &'a str, output: Output<'a> },
}

impl WriteJson for InputPart<'_> {
    fn write_json(&self, out: &mut Vec<u8>) {
        let mut m = Obj::new(out);
        match self {
            InputPart::Text(text) => {
                m.str("type", "input_text");
                m.str("text", text);
            }
            InputPart::Image(url) => {
                m.str("type", "input_image");
                m.str("detail", "auto");
                m.str("image_url", url);
            }
        }
        m.end();
    }
}

impl WriteJson for Output<'_> {
    fn write_json(&self, out: &mut Vec<u8>) {
        match self {
            Output::Text(t) => write_str(out, t),
            Output::Parts(parts) => parts.write_json(out),
        }
    }
}

/// `{type: "output_text", text, annotations: []}`.
struct OutputText<'a>(&'a str);

impl WriteJson for OutputText<'_> {
    fn write_json(&self, out: &mut Vec<u8>) {
        let mut m = Obj::new(out);
        m.str("type", "output_text");
        m.str("text", self.0);
        m.key("annotations").extend_from_slice(b"[]");
        m.end();
    }
}

impl WriteJson for Item<'_> {
    fn write_json(&self, out: &mut Vec<u8>) {
        if let Item::Raw(value) = self {
            write_serde(out, value);
            return;
        }
        let mut m = Obj::new(out);
        match self {
            Item::Raw(_) => {}
            Item::Instructions { role, text } => {
                m.str("role", role);
                m.str("content", text);
            }
            Item::User(parts) => {
                m.str("role", "user");
                m.json("content", parts);
            }
            Item::Message { text, id, phase } => {
                m.str("type", "message");
                m.str("role", "assistant");
                m.json("content", &[OutputText(text)][..]);
                m.str("status", "completed");
                m.str("id", id);
                if let Some(phase) = phase {
                    m.str("phase", phase);
                }
            }
            Item::FunctionCall { id, call_id, name, arguments, namespace } => {
                m.str("type", "function_call");
                if let Some(id) = id {
                    m.str("id", id);
                }
                m.str("call_id", call_id);
                m.str("name", name);
                m.str("arguments", arguments);
                if let Some(ns) = namespace {
                    m.str("namespace", ns);
                }
            }
            Item::FunctionCallOutput { call_id, output } => {
                m.str("type", "function_call_output");
                m.str("call_id", call_id);
                m.json("output", output);
            }
            Item::CustomToolCall { id, call_id, name, input, namespace } => {
                m.str("type", "custom_tool_call");
                if let Some(id) = id {
                    m.str("id", id);
                }
                m.str("call_id", call_id);
                m.str("name", name);
                m.str("input", input);
                if let Some(ns) = namespace {
                    m.str("namespace", ns);
                }
            }
            Item::CustomToolCallOutput { call_id, output } => {
                m.str("type", "custom_tool_call_output");
                m.str("call_id", call_id);
                m.json("output", output);
            }
        }
        m.end();
    }
}

fn text_signature_id(signature: Option<&str>) -> (Option<String>, Option<String>) {
    let Some(sig) = signature.filter(|s| !s.is_empty()) else { return (None, None) };
    if sig.starts_with('{')
        && let Ok(v) = serde_json::from_str::<Value>(sig)
        && v.get("v") == Some(&json!(1))
        && let Some(id) = v.get("id").and_then(Value::as_str)
    {
        let phase = v.get("phase").and_then(Value::as_str).filter(|p| *p == "commentary" || *p == "final_answer");
        return (Some(id.to_owned()), phase.map(str::to_owned));
    }
    (Some(sig.to_owned()), None)
}

fn tool_result_output<'a>(model: &Model, content: &'a [UserBlock]) -> Output<'a> {
    let texts: Vec<&'a str> = content.iter().filter_map(UserBlock::as_text).collect();
    let text: Cow<'a, str> = match texts.as_slice() {
        [one] => Cow::Borrowed(one),
        many => Cow::Owned(many.join("\n")),
    };
    let images: Vec<_> = content
        .iter()
        .filter_map(|b| match b {
            UserBlock::Image(i) => Some(i),
            UserBlock::Text(_) => None,
        })
        .collect();
    let has_text = !text.trim().is_empty();
    if images.is_empty() || !model.supports_images() {
        return Output::Text(if has_text {
            text
        } else if images.is_empty() {
            Cow::Borrowed("(no tool output)")
        } else {
            Cow::Borrowed("(see attached image)")
        });
    }
    let mut out = Vec::with_capacity(images.len() + 1);
    if has_text {
        out.push(InputPart::Text(text));
    }
    out.extend(images.into_iter().map(|image| InputPart::Image(data_url(&image.mime_type, &image.data))));
    Output::Parts(out)
}

/// The cross-provider handoff with this API's tool-call ids, borrowing unchanged messages.
pub(crate) fn handoff<'a>(model: &Model, view: &'a [&'a Message]) -> Vec<HandedOff<'a>> {
    let normalize = |id: &str, source: &AssistantMessage| normalize_tool_call_id(model, id, source);
    transform_for_model_borrowed(view, model, &normalize)
}

/// [`handoff`] as a plan, for a body written more than once.
pub(crate) fn handoff_plan(model: &Model, view: &[&Message]) -> Vec<crate::handoff::Handed> {
    let normalize = |id: &str, source: &AssistantMessage| normalize_tool_call_id(model, id, source);
    crate::http::shared::plan_for_model(view, model, &normalize)
}

/// Converts the handed-off transcript into Responses input items; `grammar` maps each grammar
/// tool to its input property (their calls and results replay as custom tool items).
pub(crate) fn convert<'a>(
    model: &Model,
    messages: &'a [HandedOff<'a>],
    grammar: &std::collections::HashMap<String, String>,
) -> Vec<Item<'a>> {
    convert_with(model, messages, grammar, None)
}

/// What a Responses transport says in place beyond the messages (pi's `convertResponsesMessages`
/// options `supportsAdditionalTools`, `supportsToolSearch` and `configurationUpdateEffort`).
pub(crate) struct Extras<'t> {
    /// How tool changes are expressed.
    pub support: crate::transcript::ToolChangeSupport,
    /// Leading system messages whose tools are in the top-level list.
    pub folded_system_messages: usize,
    /// Converts tools (`true`: as a tool search result, `defer_loading`).
    pub tools: &'t dyn Fn(&[crate::types::Tool], bool) -> Vec<Value>,
    /// The effort of `configuration_update` items, when the model takes them.
    pub configuration_update_effort: Option<Value>,
}

const INCREMENTAL_TOOLS_NOTICE: &str = "This is an incremental tools update. Previously declared tools remain available unless explicitly marked unavailable. A tool declared again here is available again, and its latest definition replaces the earlier one.";

/// The tool changes of the system messages after the folded ones, as items.
#[derive(Default)]
struct ToolChanges {
    declared: bool,
    /// Tools announced as removed and not declared again since (in announcement order).
    unavailable: indexmap::IndexSet<String>,
}

impl ToolChanges {
    fn additions(
        &mut self,
        extras: &Extras<'_>,
        tools: &[crate::types::Tool],
        seed: &str,
        role: &'static str,
        items: &mut Vec<Item<'_>>,
    ) {
        for tool in tools {
            self.unavailable.shift_remove(&tool.name);
        }
        if tools.is_empty() {
            return;
        }
        match extras.support {
            crate::transcript::ToolChangeSupport::Changes => {
                if self.declared {
                    let text = if self.unavailable.is_empty() {
                        INCREMENTAL_TOOLS_NOTICE.to_owned()
                    } else {
                        let names: Vec<&str> = self.unavailable.iter().map(String::as_str).collect();
                        format!("{INCREMENTAL_TOOLS_NOTICE}\nStill unavailable: {}.", names.join(", "))
                    };
                    items.push(Item::Instructions { role, text });
                }
                self.declared = true;
                items.push(Item::Raw(
                    json!({"type": "additional_tools", "role": "developer", "tools": (extras.tools)(tools, false)}),
                ));
            }
            crate::transcript::ToolChangeSupport::Additions => {
                let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
                let call_id = format!("pi_tool_load_{}", short_hash(&format!("{seed}:{}", names.join(","))));
                items.push(Item::Raw(json!({"type": "tool_search_call", "call_id": call_id, "execution": "client",
                    "status": "completed", "arguments": {"query": names.join(" "), "limit": names.len()}})));
                items.push(Item::Raw(json!({"type": "tool_search_output", "call_id": call_id, "execution": "client",
                    "status": "completed", "tools": (extras.tools)(tools, true)})));
            }
            crate::transcript::ToolChangeSupport::None => {}
        }
    }
}

fn configuration_update(effort: Value) -> Item<'static> {
    Item::Raw(json!({"type": "configuration_update", "reasoning": {"effort": effort}}))
}

/// [`convert`] with a transport's [`Extras`].
pub(crate) fn convert_with<'a>(
    model: &Model,
    messages: &'a [HandedOff<'a>],
    grammar: &std::collections::HashMap<String, String>,
    extras: Option<&Extras<'_>>,
) -> Vec<Item<'a>> {
    let mut changes = ToolChanges::default();
    let mut system_index = 0usize;
    let raw_developer =
        model.compat.as_ref().and_then(|c| c.get("supportsDeveloperRole")).is_none_or(|v| v != &Value::Bool(false));
    let role = if model.reasoning && raw_developer { "developer" } else { "system" };
    let mut items = Vec::with_capacity(messages.len());
    let mut msg_index = 0usize;
    for (source_index, msg) in messages.iter().enumerate() {
        let msg: &'a Message = msg;
        let leading = source_index == 0 && matches!(msg, Message::System(_));
        match msg {
            Message::System(s) => {
                let anchor = extras.filter(|e| system_index >= e.folded_system_messages);
                system_index += 1;
                if let Some(e) = anchor {
                    let seed = format!("system:{msg_index}");
                    changes.additions(e, s.tools_added.as_deref().unwrap_or_default(), &seed, role, &mut items);
                }
                let mut parts = vec![if leading { system_message_text(s) } else { render_system_message_update(s) }];
                if anchor.is_some() {
                    // A redefinition is a removal plus an addition of the same name: only true
                    // removals are announced.
                    let added: Vec<&str> = s.tools_added.iter().flatten().map(|t| t.name.as_str()).collect();
                    let removed: Vec<&str> = s
                        .tools_removed
                        .iter()
                        .flatten()
                        .map(|t| t.name.as_str())
                        .filter(|n| !added.contains(n))
                        .collect();
                    if !removed.is_empty() {
                        let lines: Vec<String> = removed.iter().map(|n| format!("- {n}")).collect();
                        parts.push(format!(
                            "The following tools are no longer available. Do not call them:\n{}",
                            lines.join("\n")
                        ));
                    }
                    changes.unavailable.extend(removed.into_iter().map(str::to_owned));
                }
                let text = parts.into_iter().filter(|p| !p.is_empty()).collect::<Vec<_>>().join("\n\n");
                if !text.is_empty() {
                    items.push(Item::Instructions { role, text });
                }
            }
            Message::User(u) => match &u.content {
                Content::Text(t) => items.push(Item::User(vec![InputPart::Text(Cow::Borrowed(t))])),
                Content::Blocks(blocks) => {
                    let content: Vec<InputPart<'a>> = blocks
                        .iter()
                        .map(|b| match b {
                            UserBlock::Text(t) => InputPart::Text(Cow::Borrowed(&t.text)),
                            UserBlock::Image(i) => InputPart::Image(data_url(&i.mime_type, &i.data)),
                        })
                        .collect();
                    if content.is_empty() {
                        continue;
                    }
                    items.push(Item::User(content));
                }
            },
            Message::Assistant(a) => {
                let same_provider_api = a.provider == model.provider && a.api == model.api;
                let same_model = same_provider_api && a.model == model.id;
                let different_model = same_provider_api && a.model != model.id;
                let mut text_index = 0usize;
                let before = items.len();
                for block in &a.content {
                    match block {
                        AssistantBlock::Thinking(t) => {
                            if let Some(sig) = t.thinking_signature.as_deref().filter(|s| !s.is_empty()) {
                                match serde_json::from_str::<Value>(sig) {
                                    Ok(item) => items.push(Item::Raw(item)),
                                    Err(error) => {
                                        tracing::warn!(%error, "dropping a thinking signature that is not JSON")
                                    }
                                }
                            }
                        }
                        AssistantBlock::Text(t) => {
                            let (id, phase) = text_signature_id(t.text_signature.as_deref());
                            let fallback = || {
                                if text_index == 0 {
                                    format!("msg_pi_{msg_index}")
                                } else {
                                    format!("msg_pi_{msg_index}_{text_index}")
                                }
                            };
                            let id = match id {
                                None => fallback(),
                                Some(id) if id.chars().count() > 64 => format!("msg_{}", short_hash(&id)),
                                Some(id) => id,
                            };
                            text_index += 1;
                            items.push(Item::Message { text: &t.text, id, phase });
                        }
                        AssistantBlock::ToolCall(call) if grammar.contains_key(&call.name) => {
                            let mut parts = call.id.split('|');
                            let call_id = parts.next().unwrap_or_default();
                            let item_id = parts.next().filter(|i| !different_model && i.starts_with("ctc_"));
                            // A call without its string input was refused before the body was built.
                            let input =
                                call.arguments.get(&grammar[&call.name]).and_then(Value::as_str).unwrap_or_default();
                            items.push(Item::CustomToolCall {
                                id: item_id,
                                call_id,
                                name: &call.name,
                                input,
                                namespace: call.namespace.as_deref().filter(|_| same_model),
                            });
                        }
                        AssistantBlock::ToolCall(call) => {
                            let mut parts = call.id.split('|');
                            let call_id = parts.next().unwrap_or_default();
                            let item_id = parts.next().filter(|i| !different_model && i.starts_with("fc_"));
                            items.push(Item::FunctionCall {
                                id: item_id,
                                call_id,
                                name: &call.name,
                                arguments: serde_json::to_string(&call.arguments).unwrap_or_else(|_| "{}".to_owned()),
                                namespace: call.namespace.as_deref().filter(|_| same_model),
                            });
                        }
                    }
                }
                if items.len() == before {
                    continue;
                }
                if let (Some(_), true, Some(level)) = (
                    extras.and_then(|e| e.configuration_update_effort.as_ref()),
                    same_model,
                    a.provider_thinking_level.as_ref(),
                ) {
                    items.insert(before, configuration_update(json!(level)));
                }
            }
            Message::ToolResult(r) => {
                let call_id = r.tool_call_id.split('|').next().unwrap_or_default();
                let output = tool_result_output(model, &r.content);
                if grammar.contains_key(&r.tool_name) {
                    items.push(Item::CustomToolCallOutput { call_id, output });
                } else {
                    items.push(Item::FunctionCallOutput { call_id, output });
                }
            }
        }
        if !leading {
            msg_index += 1;
        }
    }
    if let Some(effort) = extras.and_then(|e| e.configuration_update_effort.clone()) {
        items.push(configuration_update(effort));
    }
    items
}
