//! Content blocks: text, thinking, image and tool call, and the `string | blocks` content shape.

use serde::de::{self, Deserialize, Deserializer, SeqAccess, Visitor};
use serde::ser::{Serialize, Serializer};
use serde_json::{Map, Value};

use crate::{json_object, json_tagged_enum};

json_object! {
    /// `{type: "text", text, textSignature?}`.
    ///
    /// ```
    /// let t = pi_ai::TextContent::new("hi");
    /// assert_eq!(serde_json::to_string(&t).unwrap(), r#"{"type":"text","text":"hi"}"#);
    /// ```
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct TextContent tag("type" = "text") {
        /// The text.
        text: req String = "text",
        /// OpenAI Responses item id as JSON `{"v":1,"id":…,"phase"?}` (or a plain id in legacy data).
        text_signature: opt String = "textSignature",
    }
}

impl TextContent {
    /// A text block without a signature.
    pub fn new(text: impl Into<String>) -> Self {
        TextContent { text: text.into(), ..Default::default() }
    }
}

json_object! {
    /// `{type: "thinking", thinking, thinkingSignature?, redacted?}`.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ThinkingContent tag("type" = "thinking") {
        /// The reasoning text (`"[Reasoning redacted]"` when redacted).
        thinking: req String = "thinking",
        /// Opaque, provider-specific signature; holds the payload when `redacted`.
        thinking_signature: opt String = "thinkingSignature",
        /// The thinking was redacted by safety filters.
        redacted: opt bool = "redacted",
    }
}

impl ThinkingContent {
    /// A thinking block without a signature.
    pub fn new(thinking: impl Into<String>) -> Self {
        ThinkingContent { thinking: thinking.into(), ..Default::default() }
    }
}

json_object! {
    /// `{type: "image", data, mimeType}`: base64 data without a `data:` prefix.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ImageContent tag("type" = "image") {
        /// Base64 image bytes.
        data: req String = "data",
        /// MIME type, e.g. `image/png`.
        mime_type: req String = "mimeType",
    }
}

impl ImageContent {
    /// An image block.
    pub fn new(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ImageContent { data: data.into(), mime_type: mime_type.into(), ..Default::default() }
    }
}

json_object! {
    /// `{type: "toolCall", id, name, arguments, thoughtSignature?, namespace?, argumentsError?}`.
    ///
    /// `arguments` is always an object; when the model's argument text was not a JSON object it is
    /// `{}` and `arguments_error` says why.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ToolCall tag("type" = "toolCall") {
        /// Provider-assigned call id.
        id: req String = "id",
        /// Name of the tool to call.
        name: req String = "name",
        /// The arguments object.
        arguments: req Map<String, Value> = "arguments",
        /// Gemini thought signature.
        thought_signature: opt String = "thoughtSignature",
        /// OpenAI Responses namespace.
        namespace: opt String = "namespace",
        /// Set when the argument text was not a valid JSON object.
        arguments_error: opt String = "argumentsError",
    }
}

impl ToolCall {
    /// A tool call with the given arguments.
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: Map<String, Value>) -> Self {
        ToolCall { id: id.into(), name: name.into(), arguments, ..Default::default() }
    }
}

json_tagged_enum! {
    /// A block of user or tool-result content: text or image.
    #[derive(Clone, Debug, PartialEq)]
    pub enum UserBlock tag("type") {
        /// Text.
        Text(TextContent) = "text",
        /// Image.
        Image(ImageContent) = "image",
    }
}

json_tagged_enum! {
    /// A block of assistant content: text, thinking or tool call.
    #[derive(Clone, Debug, PartialEq)]
    pub enum AssistantBlock tag("type") {
        /// Text.
        Text(TextContent) = "text",
        /// Thinking.
        Thinking(ThinkingContent) = "thinking",
        /// Tool call.
        ToolCall(ToolCall) = "toolCall",
    }
}

impl UserBlock {
    /// The text, if this is a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            UserBlock::Text(t) => Some(&t.text),
            UserBlock::Image(_) => None,
        }
    }
}

impl AssistantBlock {
    /// The text, if this is a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            AssistantBlock::Text(t) => Some(&t.text),
            _ => None,
        }
    }

    /// The tool call, if this is one.
    pub fn as_tool_call(&self) -> Option<&ToolCall> {
        match self {
            AssistantBlock::ToolCall(t) => Some(t),
            _ => None,
        }
    }
}

/// Something that may hold text, for [`content_text`](crate::transcript::content_text).
pub trait MaybeText {
    /// The text of a text block, `None` for any other block.
    fn maybe_text(&self) -> Option<&str>;
}

impl MaybeText for TextContent {
    fn maybe_text(&self) -> Option<&str> {
        Some(&self.text)
    }
}

impl MaybeText for UserBlock {
    fn maybe_text(&self) -> Option<&str> {
        self.as_text()
    }
}

impl MaybeText for AssistantBlock {
    fn maybe_text(&self) -> Option<&str> {
        self.as_text()
    }
}

/// Message content that pi writes either as a plain string or as an array of blocks.
///
/// ```
/// use pi_ai::{Content, TextContent};
/// let c: Content<TextContent> = serde_json::from_str(r#""hello""#).unwrap();
/// assert_eq!(c, Content::Text("hello".into()));
/// let c: Content<TextContent> = serde_json::from_str(r#"[{"type":"text","text":"a"}]"#).unwrap();
/// assert_eq!(c, Content::Blocks(vec![TextContent::new("a")]));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum Content<B> {
    /// A plain string.
    Text(String),
    /// An array of blocks.
    Blocks(Vec<B>),
}

impl<B> Default for Content<B> {
    fn default() -> Self {
        Content::Text(String::new())
    }
}

impl<B> From<&str> for Content<B> {
    fn from(value: &str) -> Self {
        Content::Text(value.to_owned())
    }
}

impl<B> From<String> for Content<B> {
    fn from(value: String) -> Self {
        Content::Text(value)
    }
}

impl<B> From<Vec<B>> for Content<B> {
    fn from(value: Vec<B>) -> Self {
        Content::Blocks(value)
    }
}

impl<B: Serialize> Serialize for Content<B> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Content::Text(s) => serializer.serialize_str(s),
            Content::Blocks(b) => b.serialize(serializer),
        }
    }
}

impl<'de, B: Deserialize<'de>> Deserialize<'de> for Content<B> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V<B>(std::marker::PhantomData<B>);
        impl<'de, B: Deserialize<'de>> Visitor<'de> for V<B> {
            type Value = Content<B>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string or an array of content blocks")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Content::Text(v.to_owned()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Content::Text(v))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
                while let Some(b) = seq.next_element()? {
                    out.push(b);
                }
                Ok(Content::Blocks(out))
            }
        }
        deserializer.deserialize_any(V(std::marker::PhantomData))
    }
}

impl<B> Content<B> {
    /// The blocks, or `None` for a plain string.
    pub fn blocks(&self) -> Option<&[B]> {
        match self {
            Content::Text(_) => None,
            Content::Blocks(b) => Some(b),
        }
    }
}
