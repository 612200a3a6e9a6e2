//! pi's `NestedToolCallRunner` bookkeeping: tool calls a tool makes while it runs
//! (`ctx.executeTool`, codemode scripts) get the ids `<callerId>/<n>` (one counter per caller),
//! and each model-issued call keeps a record of the nested calls it made, its own and those of
//! the tools it called, which becomes `nestedCalls` on its tool result message.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use pi_ai::Usage;
use serde_json::{Map, Value, json};

use crate::compaction::summarize::combine_usage;

/// pi's `NESTED_CALL_LIMITS`.
const MAX_CALLS: usize = 256;
const MAX_ARGUMENT_BYTES_PER_CALL: usize = 8 * 1024;
const MAX_ARGUMENT_BYTES_TOTAL: usize = 32 * 1024;
const MAX_ERROR_CHARS: usize = 500;

/// pi's `NestedCallRecorder`: the calls of one model-issued call.
#[derive(Default)]
struct Recorder {
    calls: Vec<(Map<String, Value>, Instant)>,
    complete: bool,
    argument_bytes: usize,
    /// Summed usage of every nested result, calls left out of the record included.
    usage: Option<Usage>,
}

impl Recorder {
    fn start(&mut self, id: &str, name: &str, args: &Map<String, Value>) -> Option<usize> {
        if self.calls.len() >= MAX_CALLS {
            self.complete = false;
            return None;
        }
        let mut record = Map::new();
        record.insert("id".into(), json!(id));
        record.insert("name".into(), json!(name));
        record.insert("status".into(), json!("unfinished"));
        let bytes = Value::Object(args.clone()).to_string().len();
        if bytes > MAX_ARGUMENT_BYTES_PER_CALL || self.argument_bytes + bytes > MAX_ARGUMENT_BYTES_TOTAL {
            record.insert("argumentsBytes".into(), json!(bytes));
            self.complete = false;
        } else {
            record.insert("arguments".into(), Value::Object(args.clone()));
            self.argument_bytes += bytes;
        }
        self.calls.push((record, Instant::now()));
        Some(self.calls.len() - 1)
    }

    fn finish(&mut self, index: usize, is_error: bool, error_text: &str) {
        let Some((record, started)) = self.calls.get_mut(index) else { return };
        record.insert("status".into(), json!(if is_error { "error" } else { "ok" }));
        record.insert("durationMs".into(), json!((started.elapsed().as_secs_f64() * 1000.0).round() as u64));
        if is_error && !error_text.is_empty() {
            record.insert("error".into(), json!(error_text.chars().take(MAX_ERROR_CHARS).collect::<String>()));
        }
    }

    fn snapshot(&self) -> Option<Map<String, Value>> {
        if self.calls.is_empty() && self.complete {
            return None;
        }
        let calls: Vec<Value> = self.calls.iter().map(|(r, _)| Value::Object(r.clone())).collect();
        let finished = calls.iter().all(|c| c["status"] != "unfinished");
        let mut out = Map::new();
        out.insert("calls".into(), Value::Array(calls));
        out.insert("complete".into(), json!(self.complete && finished));
        Some(out)
    }
}

struct Scope {
    recorder: Arc<Mutex<Recorder>>,
    next_id: u64,
}

/// The scopes of a session's nested calls, by the id of the calling tool call.
#[derive(Default)]
pub(crate) struct NestedCalls {
    scopes: HashMap<String, Scope>,
}

/// What a model-issued call's nested calls leave on its tool result message.
#[derive(Clone, Debug, Default)]
pub(crate) struct NestedRecord {
    /// `nestedCalls`, absent when no call was made.
    pub(crate) calls: Option<Map<String, Value>>,
    /// Their summed usage, added to the message's.
    pub(crate) usage: Option<Usage>,
}

impl NestedRecord {
    /// `message` with the record: `nestedCalls` set, the usage added to its own.
    pub(crate) fn apply(&self, message: &mut pi_ai::ToolResultMessage) {
        if let Some(calls) = &self.calls {
            message.nested_calls = Some(calls.clone());
        }
        if let Some(usage) = &self.usage {
            message.usage = Some(match &message.usage {
                Some(own) => combine_usage(own, usage),
                None => usage.clone(),
            });
        }
    }
}

/// One nested call as it runs: its id and its place in its record.
pub(crate) struct NestedCall {
    /// `<callerId>/<n>`.
    pub(crate) id: String,
    recorder: Arc<Mutex<Recorder>>,
    index: Option<usize>,
}

fn lock(recorder: &Mutex<Recorder>) -> std::sync::MutexGuard<'_, Recorder> {
    recorder.lock().unwrap_or_else(|e| e.into_inner())
}

impl NestedCalls {
    /// Starts a call of `name` by `caller`: its id, recorded in the caller's record; calls the
    /// new call makes record into the same one.
    pub(crate) fn begin(&mut self, caller: &str, name: &str, args: &Map<String, Value>) -> NestedCall {
        let scope = self.scopes.entry(caller.to_owned()).or_insert_with(|| Scope {
            recorder: Arc::new(Mutex::new(Recorder { complete: true, ..Default::default() })),
            next_id: 1,
        });
        let id = format!("{caller}/{}", scope.next_id);
        scope.next_id += 1;
        let recorder = scope.recorder.clone();
        let index = lock(&recorder).start(&id, name, args);
        self.scopes.insert(id.clone(), Scope { recorder: recorder.clone(), next_id: 1 });
        NestedCall { id, recorder, index }
    }

    /// Ends `call`: its outcome in the record, its usage in the record's sum; its own scope is
    /// gone.
    pub(crate) fn end(&mut self, call: &NestedCall, is_error: bool, error_text: &str, usage: Option<&Usage>) {
        self.scopes.remove(&call.id);
        let mut recorder = lock(&call.recorder);
        if let Some(index) = call.index {
            recorder.finish(index, is_error, error_text);
        }
        if let Some(usage) = usage {
            recorder.usage = Some(match &recorder.usage {
                Some(sum) => combine_usage(sum, usage),
                None => usage.clone(),
            });
        }
    }

    /// pi's `takeRecord`: the record of the nested calls `tool_call_id` made (`nestedCalls`) and
    /// their summed usage.
    pub(crate) fn take_record(&mut self, tool_call_id: &str) -> Option<NestedRecord> {
        let scope = self.scopes.remove(tool_call_id)?;
        let recorder = lock(&scope.recorder);
        Some(NestedRecord { calls: recorder.snapshot(), usage: recorder.usage.clone() })
    }

    /// Forgets every scope (at `agent_end`).
    pub(crate) fn clear(&mut self) {
        self.scopes.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_count_per_caller_and_records_keep_pi_s_shape() {
        let mut nested = NestedCalls::default();
        let args = json!({"path": "a"}).as_object().cloned().unwrap_or_default();
        let first = nested.begin("call_1", "read", &args);
        let inner = nested.begin(&first.id, "bash", &Map::new());
        let other = nested.begin("call_2", "read", &args);
        assert_eq!((first.id.as_str(), inner.id.as_str(), other.id.as_str()), ("call_1/1", "call_1/1/1", "call_2/1"));
        let used = Usage { input: 3, output: 2, total_tokens: 5, ..Default::default() };
        nested.end(&inner, true, "boom", Some(&used));
        nested.end(&first, false, "", Some(&used));
        let taken = nested.take_record("call_1").expect("record");
        assert_eq!(taken.usage.as_ref().map(|u| (u.input, u.output, u.total_tokens)), Some((6, 4, 10)));
        let record = taken.calls.expect("calls");
        let calls = record["calls"].as_array().cloned().unwrap_or_default();
        let keys: Vec<&str> = calls[0].as_object().map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default();
        assert_eq!(keys, ["id", "name", "status", "arguments", "durationMs"]);
        assert_eq!(calls[1]["error"], "boom");
        assert_eq!(record["complete"], true);
        assert_eq!(nested.begin("call_1", "read", &args).id, "call_1/1", "a taken record starts over");
        let open = nested.take_record("call_2").and_then(|r| r.calls).expect("record");
        assert_eq!(open["complete"], false, "a call still running leaves the record incomplete");
    }
}
