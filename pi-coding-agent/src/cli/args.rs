//! pi's argument parser, token for token (`cli/args.ts` of pi 1.6.0).
//!
//! pi does not follow POSIX clustering: `-nt`, `-xt`, `-nbt` are single options, a value option
//! at the end of the line is an unknown option (`--model` alone → `Unknown option: --model`), and
//! unknown `--long` flags are collected (extensions may claim them) rather than rejected at once.
//! So the parser is a flag table matched on whole tokens, not a generic option parser.
//!
//! ```
//! use pi_coding_agent::cli::args::{Args, Mode};
//! let a = Args::parse(["-p", "hello", "@a.md", "--mode", "json", "-nt"]);
//! assert_eq!(a.messages, ["hello"]);
//! assert_eq!(a.file_args, ["a.md"]);
//! assert_eq!(a.mode, Some(Mode::Json));
//! assert!(a.print && a.no_tools);
//! ```

use indexmap::IndexMap;

/// The thinking levels pi accepts on the command line, in order.
pub const VALID_THINKING_LEVELS: [&str; 7] = ["off", "minimal", "low", "medium", "high", "xhigh", "max"];

/// `--mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Plain text (print mode when not interactive).
    Text,
    /// JSON event stream.
    Json,
    /// JSON-lines RPC on stdin/stdout.
    Rpc,
}

/// Severity of a parse diagnostic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParseSeverity {
    /// Printed as `Warning: …`; the run goes on.
    Warning,
    /// Printed as `Error: …`; exit 1.
    Error,
}

/// A message produced while parsing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// Warning or error.
    pub kind: ParseSeverity,
    /// The text, without the `Error: ` prefix.
    pub message: String,
}

/// A value of an unknown `--flag`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UnknownFlagValue {
    /// `--flag` alone.
    Bool,
    /// `--flag value` or `--flag=value`.
    Value(String),
}

/// `--list-models`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ListModels {
    /// Every model.
    All,
    /// Models matching a fuzzy search.
    Search(String),
}

/// Parsed command line.
#[allow(missing_docs)] // the fields are the flags of the same names (see `pi --help`)
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Args {
    pub provider: Option<String>,
    pub model: Option<String>,
    pub api_key: Option<String>,
    pub system_prompt: Option<String>,
    pub append_system_prompt: Vec<String>,
    pub thinking: Option<String>,
    pub continue_session: bool,
    pub resume: bool,
    pub help: bool,
    pub version: bool,
    pub mode: Option<Mode>,
    pub name: Option<String>,
    pub no_session: bool,
    pub session: Option<String>,
    pub session_id: Option<String>,
    pub fork: Option<String>,
    pub session_dir: Option<String>,
    pub models: Option<Vec<String>>,
    pub tools: Option<Vec<String>>,
    pub exclude_tools: Option<Vec<String>>,
    pub no_tools: bool,
    pub no_builtin_tools: bool,
    pub extensions: Vec<String>,
    pub no_extensions: bool,
    pub no_mcp: bool,
    pub print: bool,
    pub export: Option<String>,
    pub no_skills: bool,
    pub skills: Vec<String>,
    pub prompt_templates: Vec<String>,
    pub no_prompt_templates: bool,
    pub themes: Vec<String>,
    pub no_themes: bool,
    pub use_theme: Option<String>,
    pub no_context_files: bool,
    pub list_models: Option<ListModels>,
    pub tui_mode: Option<String>,
    pub verbose: bool,
    pub project_trust_override: Option<bool>,
    pub offline: bool,
    /// Prompt messages, in order.
    pub messages: Vec<String>,
    /// `@file` arguments without the `@` (decoded lossily).
    pub file_args: Vec<String>,
    /// The same `@file` arguments as the bytes they were given in (a name that is not UTF-8 still
    /// opens the file).
    pub file_arg_paths: Vec<std::ffi::OsString>,
    /// `--flags` nobody claimed (reported as unknown options unless an extension registers them).
    pub unknown_flags: IndexMap<String, UnknownFlagValue>,
    /// Warnings and errors, in order.
    pub diagnostics: Vec<Diagnostic>,
}

/// `original` without its leading `@`, byte for byte.
fn strip_at(original: &std::ffi::OsStr) -> std::ffi::OsString {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let bytes = original.as_bytes();
        std::ffi::OsStr::from_bytes(bytes.strip_prefix(b"@").unwrap_or(bytes)).to_owned()
    }
    #[cfg(not(unix))]
    {
        let lossy = original.to_string_lossy();
        lossy.strip_prefix('@').unwrap_or(&lossy).into()
    }
}

fn split_list(text: &str) -> Vec<String> {
    text.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned).collect()
}

pub use crate::settings::tools::tool_list_error;

impl Args {
    /// Parses the arguments after the program name.
    pub fn parse<I, S>(args: I) -> Args
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self::parse_inner(args.into_iter().map(Into::into).collect(), None)
    }

    /// Parses the arguments as the operating system gave them: text that is not UTF-8 is decoded
    /// lossily (U+FFFD, as Node decodes `process.argv`), `@file` paths keep their bytes.
    ///
    /// ```
    /// use pi_coding_agent::cli::args::Args;
    /// let a = Args::parse_os(["-p".into(), "hi".into(), "@a.md".into()]);
    /// assert_eq!(a.file_arg_paths, [std::ffi::OsString::from("a.md")]);
    /// ```
    pub fn parse_os<I: IntoIterator<Item = std::ffi::OsString>>(args: I) -> Args {
        let raw: Vec<std::ffi::OsString> = args.into_iter().collect();
        let text = raw.iter().map(|a| a.to_string_lossy().into_owned()).collect();
        Self::parse_inner(text, Some(&raw))
    }

    fn parse_inner(args: Vec<String>, raw: Option<&[std::ffi::OsString]>) -> Args {
        // The bytes of `@file` argument `j` without its `@`.
        let raw_file = |j: usize, lossy: &str| -> std::ffi::OsString {
            match raw.and_then(|r| r.get(j)) {
                Some(original) => strip_at(original),
                None => lossy.into(),
            }
        };
        let mut r = Args::default();
        let error = |r: &mut Args, message: String| {
            r.diagnostics.push(Diagnostic { kind: ParseSeverity::Error, message });
        };
        let mut i = 0;
        while i < args.len() {
            let arg = args[i].as_str();
            let has_next = i + 1 < args.len();
            let next = args.get(i + 1).map(String::as_str);
            match arg {
                "--" => {
                    for (j, positional) in args.iter().enumerate().skip(i + 1) {
                        match positional.strip_prefix('@') {
                            Some(file) => {
                                r.file_args.push(file.to_owned());
                                r.file_arg_paths.push(raw_file(j, file));
                            }
                            None => r.messages.push(positional.clone()),
                        }
                    }
                    break;
                }
                "--help" | "-h" => r.help = true,
                "--version" | "-v" => r.version = true,
                "--mode" => match next {
                    None => error(&mut r, "--mode requires text, json, or rpc".into()),
                    Some(m) if m.starts_with('-') => error(&mut r, "--mode requires text, json, or rpc".into()),
                    Some(m) => {
                        i += 1;
                        match m {
                            "text" => r.mode = Some(Mode::Text),
                            "json" => r.mode = Some(Mode::Json),
                            "rpc" => r.mode = Some(Mode::Rpc),
                            _ => error(&mut r, format!("Invalid mode \"{m}\". Valid values: text, json, rpc")),
                        }
                    }
                },
                "--continue" | "-c" => r.continue_session = true,
                "--resume" | "-r" => r.resume = true,
                "--provider" if has_next => r.provider = Some(take(&args, &mut i)),
                "--model" if has_next => r.model = Some(take(&args, &mut i)),
                "--api-key" if has_next => r.api_key = Some(take(&args, &mut i)),
                "--system-prompt" if has_next => r.system_prompt = Some(take(&args, &mut i)),
                "--append-system-prompt" if has_next => r.append_system_prompt.push(take(&args, &mut i)),
                "--name" | "-n" => {
                    if has_next {
                        r.name = Some(take(&args, &mut i));
                    } else {
                        error(&mut r, "--name requires a value".into());
                    }
                }
                "--no-session" => r.no_session = true,
                "--session" if has_next => r.session = Some(take(&args, &mut i)),
                "--session-id" if has_next => r.session_id = Some(take(&args, &mut i)),
                "--fork" if has_next => r.fork = Some(take(&args, &mut i)),
                "--session-dir" if has_next => r.session_dir = Some(take(&args, &mut i)),
                "--models" if has_next => r.models = Some(split_list(&take(&args, &mut i))),
                "--no-tools" | "-nt" => r.no_tools = true,
                "--no-builtin-tools" | "-nbt" => r.no_builtin_tools = true,
                "--tools" | "-t" if has_next => {
                    let tools = split_list(&take(&args, &mut i));
                    match tool_list_error(&tools) {
                        Some(e) => error(&mut r, format!("{arg}: {e}")),
                        None => r.tools = Some(tools),
                    }
                }
                "--exclude-tools" | "-xt" if has_next => r.exclude_tools = Some(split_list(&take(&args, &mut i))),
                "--thinking" if has_next => {
                    let level = take(&args, &mut i);
                    if VALID_THINKING_LEVELS.contains(&level.as_str()) {
                        r.thinking = Some(level);
                    } else {
                        r.diagnostics.push(Diagnostic {
                            kind: ParseSeverity::Warning,
                            message: format!(
                                "Invalid thinking level \"{level}\". Valid values: {}",
                                VALID_THINKING_LEVELS.join(", ")
                            ),
                        });
                    }
                }
                "--print" | "-p" => {
                    r.print = true;
                    if let Some(n) = next
                        && !n.starts_with('@')
                        && (!n.starts_with('-') || n.starts_with("---"))
                    {
                        r.messages.push(n.to_owned());
                        i += 1;
                    }
                }
                "--export" if has_next => r.export = Some(take(&args, &mut i)),
                "--extension" | "-e" if has_next => r.extensions.push(take(&args, &mut i)),
                "--no-extensions" | "-ne" => r.no_extensions = true,
                "--no-mcp" => r.no_mcp = true,
                "--skill" if has_next => r.skills.push(take(&args, &mut i)),
                "--prompt-template" if has_next => r.prompt_templates.push(take(&args, &mut i)),
                "--theme" if has_next => r.themes.push(take(&args, &mut i)),
                "--use-theme" => match next {
                    Some(t) if !t.starts_with('-') => r.use_theme = Some(take(&args, &mut i)),
                    _ => error(&mut r, "--use-theme requires a theme name".into()),
                },
                "--no-skills" | "-ns" => r.no_skills = true,
                "--no-prompt-templates" | "-np" => r.no_prompt_templates = true,
                "--no-themes" => r.no_themes = true,
                "--no-context-files" | "-nc" => r.no_context_files = true,
                "--list-models" => match next {
                    Some(n) if !n.starts_with('-') && !n.starts_with('@') => {
                        r.list_models = Some(ListModels::Search(take(&args, &mut i)))
                    }
                    _ => r.list_models = Some(ListModels::All),
                },
                "--tui-mode" => match next {
                    Some(m @ ("regular" | "fullscreen")) => {
                        r.tui_mode = Some(m.to_owned());
                        i += 1;
                    }
                    Some(m) if !m.starts_with('-') => {
                        i += 1;
                        error(&mut r, format!("Invalid TUI mode \"{m}\". Valid values: regular, fullscreen"));
                    }
                    _ => error(&mut r, "--tui-mode requires regular or fullscreen".into()),
                },
                "--verbose" => r.verbose = true,
                "--approve" | "-a" => r.project_trust_override = Some(true),
                "--no-approve" | "-na" => r.project_trust_override = Some(false),
                "--offline" => r.offline = true,
                _ if arg.starts_with('@') => {
                    r.file_args.push(arg[1..].to_owned());
                    r.file_arg_paths.push(raw_file(i, &arg[1..]));
                }
                _ if arg.starts_with("--") => {
                    if let Some(eq) = arg.find('=') {
                        r.unknown_flags
                            .insert(arg[2..eq].to_owned(), UnknownFlagValue::Value(arg[eq + 1..].to_owned()));
                    } else {
                        let name = arg[2..].to_owned();
                        match next {
                            Some(n) if !n.starts_with('-') && !n.starts_with('@') => {
                                r.unknown_flags.insert(name, UnknownFlagValue::Value(n.to_owned()));
                                i += 1;
                            }
                            _ => {
                                r.unknown_flags.insert(name, UnknownFlagValue::Bool);
                            }
                        }
                    }
                }
                _ if arg.starts_with('-') => error(&mut r, format!("Unknown option: {arg}")),
                _ => r.messages.push(arg.to_owned()),
            }
            i += 1;
        }
        r
    }

    /// The first error diagnostic, or the first unknown flag as pi reports it
    /// (`Unknown option: --name`), when no extension claims flags.
    pub fn first_error(&self) -> Option<String> {
        if let Some(d) = self.diagnostics.iter().find(|d| d.kind == ParseSeverity::Error) {
            return Some(d.message.clone());
        }
        self.unknown_flags.keys().next().map(|name| format!("Unknown option: --{name}"))
    }
}

fn take(args: &[String], i: &mut usize) -> String {
    *i += 1;
    args[*i].clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_option_at_end_is_unknown() {
        let a = Args::parse(["--model"]);
        assert_eq!(a.first_error().as_deref(), Some("Unknown option: --model"));
    }

    #[test]
    fn short_unknown_and_mode_errors() {
        assert_eq!(Args::parse(["-x"]).first_error().as_deref(), Some("Unknown option: -x"));
        assert_eq!(
            Args::parse(["--mode", "xml"]).first_error().as_deref(),
            Some("Invalid mode \"xml\". Valid values: text, json, rpc")
        );
        assert_eq!(Args::parse(["--mode"]).first_error().as_deref(), Some("--mode requires text, json, or rpc"));
    }

    #[test]
    fn unknown_long_flag_takes_a_value() {
        let a = Args::parse(["--plan", "x", "msg", "--flag=1", "--b"]);
        assert_eq!(a.messages, ["msg"]);
        assert_eq!(a.unknown_flags.get("plan"), Some(&UnknownFlagValue::Value("x".into())));
        assert_eq!(a.unknown_flags.get("flag"), Some(&UnknownFlagValue::Value("1".into())));
        assert_eq!(a.unknown_flags.get("b"), Some(&UnknownFlagValue::Bool));
    }

    #[test]
    fn print_takes_the_next_message_unless_dash_or_at() {
        let a = Args::parse(["-p", "-c"]);
        assert!(a.messages.is_empty() && a.continue_session);
        let a = Args::parse(["-p", "---x"]);
        assert_eq!(a.messages, ["---x"]);
        let a = Args::parse(["-p", "--", "- a", "@f"]);
        assert_eq!(a.messages, ["- a"]);
        assert_eq!(a.file_args, ["f"]);
    }

    #[test]
    fn tools_lists() {
        let a = Args::parse(["-t", "read, bash,,", "-xt", "write"]);
        assert_eq!(a.tools, Some(vec!["read".into(), "bash".into()]));
        assert_eq!(a.exclude_tools, Some(vec!["write".into()]));
        let a = Args::parse(["--tools", "read,+bash"]);
        assert_eq!(a.first_error().as_deref(), Some("--tools: tool names cannot be mixed with +name or -name entries"));
    }

    #[test]
    fn invalid_thinking_is_a_warning() {
        let a = Args::parse(["--thinking", "bogus"]);
        assert_eq!(a.thinking, None);
        assert_eq!(a.first_error(), None);
        assert_eq!(a.diagnostics[0].kind, ParseSeverity::Warning);
    }
}
