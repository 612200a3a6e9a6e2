//! pi's `executeBashWithOperations` (`core/bash-executor.ts`) and its local shell operations:
//! a user command's output is decoded, stripped of ANSI sequences and binary garbage, streamed as
//! deltas, kept as a rolling tail and saved to a temp file when it grows large.

use std::collections::VecDeque;
use std::io::Write;
use std::sync::{LazyLock, Mutex};

use async_trait::async_trait;
use regex::Regex;
use tokio_util::sync::CancellationToken;

use crate::extensions::{BoxError, UserBashOperations};
use crate::tools::output::{Utf8Stream, create_output_file};
use crate::tools::shell::{
    EXIT_STDIO_GRACE, SESSION_ENV_KEYS, kill_process_tree, output_chunks, resolve_shell, spawn_shell, track_group,
};
use crate::tools::truncate::{DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, TruncationOptions, truncate_tail};
use serde_json::{Map, Value, json};

/// The result of a user `!command` ([`AgentSession::execute_bash`](super::AgentSession::execute_bash)):
/// pi's one `BashResult`, the same type an extension's `user_bash` handler returns.
pub use crate::extensions::BashResult;

impl BashResult {
    /// pi's wire shape `{output, exitCode?, cancelled, truncated, fullOutputPath?}`.
    pub fn to_json(&self) -> Value {
        let mut o = Map::new();
        o.insert("output".into(), json!(self.output));
        if let Some(c) = self.exit_code {
            o.insert("exitCode".into(), json!(c));
        }
        o.insert("cancelled".into(), json!(self.cancelled));
        o.insert("truncated".into(), json!(self.truncated));
        if let Some(p) = &self.full_output_path {
            o.insert("fullOutputPath".into(), json!(p));
        }
        Value::Object(o)
    }
}

/// Longest unfinished escape sequence held back while streaming (pi's `MAX_PENDING_ANSI_LENGTH`).
const MAX_PENDING_ANSI_LENGTH: usize = 256;

/// pi's `ansiRegex` (from `ansi-regex`): OSC sequences up to the first string terminator, CSI and
/// related sequences.
static ANSI: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?:\x1b\](?s:.)*?(?:\x07|\x1b\\|\x{9c}))",
        r"|(?:(?:\x1b\[|\x{9b})[<=>]|[\x1b\x{9b}][\[\]()#;?]*)(?:[0-9]{1,4}(?:[;:][0-9]{0,4})*)?",
        r"[0-9A-PR-TZcf-nq-uy=><~]"
    ))
    .ok()
});

/// A CSI introducer without its final byte, the whole text (pi's `unfinishedAnsiAtEndRegex`, CSI
/// branch).
static UNFINISHED_CSI: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"^(?:(?:\x1b\[|\x{9b})[<=>]|[\x1b\x{9b}][\[\]()#;?]*)(?:[0-9]{1,4}(?:[;:][0-9]{0,4})*)?$").ok()
});

/// pi's `stripAnsi`.
pub(crate) fn strip_ansi(text: &str) -> String {
    if !text.contains(['\u{1b}', '\u{9b}']) {
        return text.to_owned();
    }
    match ANSI.as_ref() {
        Some(re) => re.replace_all(text, "").into_owned(),
        None => text.to_owned(),
    }
}

/// pi's `sanitizeBinaryOutput`: drops control characters but tab, newline and carriage return,
/// and the interlinear annotation characters.
pub(crate) fn sanitize_binary_output(text: &str) -> String {
    text.chars()
        .filter(|&c| !matches!(c, '\u{0}'..='\u{8}' | '\u{b}' | '\u{c}' | '\u{e}'..='\u{1f}' | '\u{fff9}'..='\u{fffb}'))
        .collect()
}

/// Whether `rest` (starting at an escape character) is an unfinished OSC or CSI sequence.
fn is_unfinished_sequence(rest: &str) -> bool {
    if let Some(body) = rest.strip_prefix("\u{1b}]") {
        let chars: Vec<char> = body.chars().collect();
        let osc = chars.iter().enumerate().all(|(i, &c)| match c {
            '\u{7}' | '\u{9c}' => false,
            '\u{1b}' => chars.get(i + 1) != Some(&'\\'),
            _ => true,
        });
        if osc {
            return true;
        }
    }
    UNFINISHED_CSI.as_ref().is_some_and(|re| re.is_match(rest))
}

/// pi's `splitIncompleteAnsiSuffix`: the text safe to strip now, and an unfinished escape sequence
/// at its end to prepend to the next chunk.
pub(crate) fn split_incomplete_ansi_suffix(value: &str) -> (String, String) {
    if !value.contains(['\u{1b}', '\u{9b}']) {
        return (value.to_owned(), String::new());
    }
    let count = value.chars().count();
    let window_start = value.char_indices().nth(count.saturating_sub(MAX_PENDING_ANSI_LENGTH)).map_or(0, |(i, _)| i);
    for (offset, c) in value[window_start..].char_indices() {
        let at = window_start + offset;
        if (c == '\u{1b}' || c == '\u{9b}') && is_unfinished_sequence(&value[at..]) {
            return (value[..at].to_owned(), value[at..].to_owned());
        }
    }
    (value.to_owned(), String::new())
}

/// The text of a chunk as pi keeps it: ANSI stripped, binary garbage removed, no carriage returns.
fn clean(raw: &str) -> String {
    sanitize_binary_output(&strip_ansi(raw)).replace('\r', "")
}

/// What the executor collected so far.
struct Collected<'a> {
    decoder: Utf8Stream,
    pending_ansi: String,
    chunks: VecDeque<String>,
    /// Length of the kept chunks in UTF-16 units (pi's `outputBytes`, a string length).
    output_units: usize,
    discarded: bool,
    total_bytes: usize,
    temp: Option<(String, std::fs::File)>,
    on_chunk: &'a (dyn Fn(&str) + Send + Sync),
}

impl Collected<'_> {
    fn ensure_temp_file(&mut self) {
        if self.temp.is_some() {
            return;
        }
        match create_output_file("pi-bash", ".log") {
            Ok((path, mut file)) => {
                for chunk in &self.chunks {
                    if let Err(e) = file.write_all(chunk.as_bytes()) {
                        tracing::warn!("writing bash output file failed: {e}");
                    }
                }
                self.temp = Some((path, file));
            }
            Err(e) => tracing::warn!("creating bash output file failed: {e}"),
        }
    }

    fn append_text(&mut self, raw: &str) {
        let text = clean(raw);
        if text.is_empty() {
            return;
        }
        if self.total_bytes > DEFAULT_MAX_BYTES {
            self.ensure_temp_file();
        }
        if let Some((_, file)) = &mut self.temp
            && let Err(e) = file.write_all(text.as_bytes())
        {
            tracing::warn!("writing bash output file failed: {e}");
        }
        self.output_units += text.encode_utf16().count();
        self.chunks.push_back(text.clone());
        while self.output_units > DEFAULT_MAX_BYTES * 2 && self.chunks.len() > 1 {
            if let Some(removed) = self.chunks.pop_front() {
                self.output_units -= removed.encode_utf16().count();
                self.discarded = true;
            }
        }
        (self.on_chunk)(&text);
    }

    fn on_data(&mut self, data: &[u8]) {
        self.total_bytes += data.len();
        let decoded = self.decoder.decode(data, false);
        let (complete, pending) = split_incomplete_ansi_suffix(&(std::mem::take(&mut self.pending_ansi) + &decoded));
        self.pending_ansi = pending;
        self.append_text(&complete);
    }

    fn flush(&mut self) {
        let rest = std::mem::take(&mut self.pending_ansi) + &self.decoder.decode(&[], true);
        self.append_text(&rest);
    }
}

/// pi's `executeBashWithOperations`: runs `command` with `ops`, streaming cleaned output to
/// `on_chunk`. A failure that was not a cancellation is returned as its message.
pub(crate) async fn execute_bash_with_operations(
    command: &str,
    cwd: &str,
    ops: &dyn UserBashOperations,
    cancel: &CancellationToken,
    on_chunk: &(dyn Fn(&str) + Send + Sync),
) -> Result<BashResult, String> {
    let collected = Mutex::new(Collected {
        decoder: Utf8Stream::default(),
        pending_ansi: String::new(),
        chunks: VecDeque::new(),
        output_units: 0,
        discarded: false,
        total_bytes: 0,
        temp: None,
        on_chunk,
    });
    let on_data = |data: &[u8]| collected.lock().unwrap_or_else(|e| e.into_inner()).on_data(data);
    let outcome = ops.exec(command, cwd, &on_data, cancel.clone()).await;
    let mut c = collected.into_inner().unwrap_or_else(|e| e.into_inner());
    let exit_code = match outcome {
        Ok(code) => code,
        Err(e) if !cancel.is_cancelled() => return Err(e.to_string()),
        Err(_) => None,
    };
    c.flush();
    let full: String = c.chunks.iter().map(String::as_str).collect();
    let truncation =
        truncate_tail(&full, TruncationOptions { max_lines: DEFAULT_MAX_LINES, max_bytes: DEFAULT_MAX_BYTES });
    if truncation.truncated {
        c.ensure_temp_file();
    }
    let full_output_path = c.temp.take().map(|(path, mut file)| {
        if let Err(e) = file.flush() {
            tracing::warn!("flushing bash output file failed: {e}");
        }
        path
    });
    let cancelled = cancel.is_cancelled();
    Ok(BashResult {
        output: if truncation.truncated { truncation.content } else { full },
        exit_code: if cancelled { None } else { exit_code },
        cancelled,
        truncated: c.discarded || truncation.truncated,
        full_output_path,
    })
}

/// pi's `createLocalBashOperations`: `bash -c` (or `sh`, or the `shellPath` setting) in its own
/// process group, stdout and stderr as they come, the whole group killed on cancellation (then
/// the run fails with `aborted`).
pub(crate) struct LocalBashOperations {
    /// The `shellPath` setting.
    pub(crate) shell_path: Option<String>,
}

#[async_trait]
impl UserBashOperations for LocalBashOperations {
    async fn exec(
        &self,
        command: &str,
        cwd: &str,
        on_data: &(dyn for<'b> Fn(&'b [u8]) + Send + Sync),
        cancel: CancellationToken,
    ) -> Result<Option<i64>, BoxError> {
        if cancel.is_cancelled() {
            return Err("aborted".into());
        }
        let shell = resolve_shell(self.shell_path.as_deref())?;
        if !std::path::Path::new(cwd).exists() {
            return Err(format!("Working directory does not exist: {cwd}\nCannot execute bash commands.").into());
        }
        let mut env: std::collections::BTreeMap<String, String> = std::env::vars().collect();
        for key in SESSION_ENV_KEYS {
            env.remove(key);
        }
        let mut child = spawn_shell(&shell, command, cwd, &env)?;
        let pid = child.id().unwrap_or(0);
        let _tracked = track_group(pid);
        let mut rx = output_chunks(&mut child);
        let mut status = None;
        let mut pipes_open = true;
        let mut killed = false;
        let mut idle_deadline: Option<tokio::time::Instant> = None;
        while status.is_none() || pipes_open {
            tokio::select! {
                chunk = rx.recv(), if pipes_open => match chunk {
                    Some(data) => {
                        on_data(&data);
                        if status.is_some() {
                            idle_deadline = Some(tokio::time::Instant::now() + EXIT_STDIO_GRACE);
                        }
                    }
                    None => pipes_open = false,
                },
                s = child.wait(), if status.is_none() => {
                    status = Some(s);
                    idle_deadline = Some(tokio::time::Instant::now() + EXIT_STDIO_GRACE);
                },
                _ = async { tokio::time::sleep_until(idle_deadline.unwrap_or_else(tokio::time::Instant::now)).await },
                    if idle_deadline.is_some() && status.is_some() && pipes_open => {
                    // Background processes hold the pipes but are quiet: stop waiting for them.
                    pipes_open = false;
                },
                _ = cancel.cancelled(), if !killed => {
                    killed = true;
                    kill_process_tree(pid);
                },
            }
        }
        if cancel.is_cancelled() {
            return Err("aborted".into());
        }
        let code = match status {
            Some(Ok(s)) => {
                use std::os::unix::process::ExitStatusExt;
                s.code().or_else(|| s.signal().map(|sig| 128 + sig)).unwrap_or(1)
            }
            _ => 1,
        };
        Ok(Some(i64::from(code)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ansi_and_binary_are_removed() {
        assert_eq!(strip_ansi("\u{1b}[31mred\u{1b}[0m \u{1b}]0;title\u{7}x"), "red x");
        assert_eq!(sanitize_binary_output("a\u{0}b\tc\u{1f}\n"), "ab\tc\n");
        let (complete, pending) = split_incomplete_ansi_suffix("ok\u{1b}[3");
        assert_eq!((complete.as_str(), pending.as_str()), ("ok", "\u{1b}[3"));
        let (complete, pending) = split_incomplete_ansi_suffix("ok\u{1b}]0;ti");
        assert_eq!((complete.as_str(), pending.as_str()), ("ok", "\u{1b}]0;ti"));
        assert_eq!(split_incomplete_ansi_suffix("ok\u{1b}[31m").1, "");
    }

    /// Plays fixed chunks, then exits with 0.
    struct Chunks(Vec<Vec<u8>>);

    #[async_trait]
    impl UserBashOperations for Chunks {
        async fn exec(
            &self,
            _command: &str,
            _cwd: &str,
            on_data: &(dyn for<'b> Fn(&'b [u8]) + Send + Sync),
            _cancel: CancellationToken,
        ) -> Result<Option<i64>, BoxError> {
            for chunk in &self.0 {
                on_data(chunk);
            }
            Ok(Some(0))
        }
    }

    async fn run(chunks: Vec<Vec<u8>>) -> (BashResult, Vec<String>) {
        let deltas = Mutex::new(Vec::new());
        let on_chunk = |d: &str| deltas.lock().unwrap_or_else(|e| e.into_inner()).push(d.to_owned());
        let cancel = CancellationToken::new();
        let result = execute_bash_with_operations("x", ".", &Chunks(chunks), &cancel, &on_chunk).await;
        (result.unwrap_or_else(|e| panic!("{e}")), deltas.into_inner().unwrap_or_else(|e| e.into_inner()))
    }

    #[tokio::test]
    async fn chunks_are_cleaned_and_split_sequences_and_characters_wait_for_the_rest() {
        let euro = "\u{20ac}".as_bytes();
        let chunks = vec![
            b"a\x1b[3".to_vec(),
            b"1mb\r\n".to_vec(),
            [b"c".as_slice(), &euro[..1]].concat(),
            [&euro[1..], b"\x07\n".as_slice()].concat(),
        ];
        let (result, deltas) = run(chunks).await;
        assert_eq!(deltas, ["a", "b\n", "c", "\u{20ac}\n"]);
        assert_eq!(result.output, "ab\nc\u{20ac}\n");
        assert_eq!((result.exit_code, result.cancelled, result.truncated), (Some(0), false, false));
        assert_eq!(result.full_output_path, None);
    }

    #[tokio::test]
    async fn long_output_keeps_the_tail_and_saves_the_whole() {
        let chunks: Vec<Vec<u8>> = (0..3000).map(|i| format!("line {i}\n").into_bytes()).collect();
        let (result, deltas) = run(chunks).await;
        assert_eq!(deltas.len(), 3000);
        assert!(result.truncated);
        // pi's truncateTail: the last 2000 lines, without the final newline.
        assert!(result.output.starts_with("line 1000\n") && result.output.ends_with("\nline 2999"));
        assert_eq!(result.output.lines().count(), DEFAULT_MAX_LINES);
        let path = result.full_output_path.unwrap_or_default();
        let saved = std::fs::read_to_string(&path).unwrap_or_default();
        let _ = std::fs::remove_file(&path);
        assert!(saved.starts_with("line 0\nline 1\n") && saved.ends_with("line 2999\n"));
    }
}
