//! Tool declarations as the model sees them.

use serde_json::Value;

use crate::json_object;

json_object! {
    /// A tool the model may call: `{name, description, parameters, constrainedSampling?}`.
    ///
    /// `parameters` is a JSON Schema object. Application-side fields (labels, executors) live in
    /// higher layers; [`to_tool_declaration`](crate::transcript::to_tool_declaration) strips
    /// anything else that was read into `extra`.
    ///
    /// ```
    /// let t = pi_ai::Tool::new("read", "Read a file", serde_json::json!({"type": "object"}));
    /// assert_eq!(
    ///     serde_json::to_string(&t).unwrap(),
    ///     r#"{"name":"read","description":"Read a file","parameters":{"type":"object"}}"#
    /// );
    /// ```
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct Tool {
        /// Unique tool name.
        name: req String = "name",
        /// What the tool does, for the model.
        description: req String = "description",
        /// JSON Schema of the arguments.
        parameters: req Value = "parameters",
        /// `false` or a constrained-sampling config (accepted and carried; not acted on).
        constrained_sampling: opt Value = "constrainedSampling",
    }
}

impl Tool {
    /// A tool declaration.
    pub fn new(name: impl Into<String>, description: impl Into<String>, parameters: Value) -> Self {
        Tool { name: name.into(), description: description.into(), parameters, ..Default::default() }
    }
}

json_object! {
    /// A reference to a tool by name: `{name}`.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ToolReference {
        /// The tool's name.
        name: req String = "name",
    }
}

impl ToolReference {
    /// A reference to `name`.
    pub fn new(name: impl Into<String>) -> Self {
        ToolReference { name: name.into(), ..Default::default() }
    }
}
