//! The command context (pi's `ExtensionCommandContext`) and the `pi.*` members that reach the
//! session, for in-process extensions: `newSession`, `fork`, `navigateTree`, `switchSession`,
//! `reload`, `waitForIdle`; `getCommands`, `getSettings`, `setModel`, `registerProvider`,
//! thinking level, the event bus. Real sessions in temp dirs, the faux model.

mod sdk_support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use pi_coding_agent::extensions::{
    Extension, ExtensionApi, FnExtension, ForkPosition, NavigateTreeRequest, NotifyEvent,
};
use sdk_support::{harness, step, text};
use serde_json::{Value, json};

type Log = Arc<Mutex<Vec<String>>>;

fn log_of(log: &Log) -> Vec<String> {
    log.lock().unwrap().clone()
}

/// Logs the session lifecycle events an extension hears.
fn log_lifecycle(pi: &ExtensionApi, log: &Log) {
    for event in ["session_start", "session_shutdown", "session_before_switch", "session_before_fork", "session_tree"] {
        let log = log.clone();
        pi.on_notify(event, move |e, _| {
            let reason = match e {
                NotifyEvent::SessionStart { reason, .. } | NotifyEvent::SessionShutdown { reason, .. } => {
                    format!(":{reason}")
                }
                _ => String::new(),
            };
            log.lock().unwrap().push(format!("{}{reason}", e.kind()));
            Box::pin(async { Ok(None) })
        });
    }
}

/// An extension whose `/ctl <action> <arg>` command drives the command context.
fn controller(log: Log, setups: Arc<AtomicUsize>) -> Arc<dyn Extension> {
    Arc::new(FnExtension::new("<inline:controller>", move |pi| {
        setups.fetch_add(1, Ordering::SeqCst);
        log_lifecycle(pi, &log);
        let log = log.clone();
        pi.register_command("ctl", Some("drive the session"), move |args, ctx| {
            let log = log.clone();
            Box::pin(async move {
                let (action, arg) = args.split_once(' ').unwrap_or((args.as_str(), ""));
                let outcome = match action {
                    "new" => ctx.new_session(None).await.map(|c| format!("cancelled={c}")),
                    "fork-at" => ctx.fork(arg, ForkPosition::At).await.map(|c| format!("cancelled={c}")),
                    "fork-before" => ctx.fork(arg, ForkPosition::Before).await.map(|c| format!("cancelled={c}")),
                    "tree" => {
                        ctx.navigate_tree(arg, NavigateTreeRequest::default()).await.map(|c| format!("cancelled={c}"))
                    }
                    "switch" => ctx.switch_session(arg).await.map(|c| format!("cancelled={c}")),
                    "reload" => ctx.reload().await.map(|()| "reloaded".to_owned()),
                    "idle" => ctx.wait_for_idle().await.map(|()| "idle".to_owned()),
                    other => Ok(format!("unknown {other}")),
                };
                log.lock().unwrap().push(format!("{action} -> {}", outcome.unwrap_or_else(|e| format!("error {e}"))));
                Ok(())
            })
        })?;
        Ok(())
    }))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn command_context_replaces_navigates_and_reloads_the_session() {
    let log: Log = Arc::default();
    let setups = Arc::new(AtomicUsize::new(0));
    let h = harness(vec![controller(log.clone(), setups.clone())], None, true).await;
    h.reply(vec![step(&h.seen, text("one")), step(&h.seen, text("two"))]);
    h.session.prompt("first").await.unwrap();
    h.session.prompt("second").await.unwrap();
    let first_file = h.session.session_file().unwrap();
    let (first_user, first_reply) = {
        let branch = h.session.branch(None);
        let ids: Vec<(String, String)> = branch
            .iter()
            .map(|e| {
                let v = serde_json::to_value(e).unwrap();
                (e.id().to_owned(), v["message"]["role"].as_str().unwrap_or_default().to_owned())
            })
            .collect();
        let user = ids.iter().find(|(_, r)| r == "user").unwrap().0.clone();
        let reply = ids.iter().find(|(_, r)| r == "assistant").unwrap().0.clone();
        (user, reply)
    };
    log.lock().unwrap().clear();

    // navigateTree: the leaf moves to the first reply within the same file.
    h.session.prompt(&format!("/ctl tree {first_reply}")).await.unwrap();
    assert_eq!(h.session.leaf_id().as_deref(), Some(first_reply.as_str()));
    assert_eq!(h.session.session_file().unwrap(), first_file);

    // fork at the first reply: a new file holding the path up to it.
    h.session.prompt(&format!("/ctl fork-at {first_reply}")).await.unwrap();
    let forked = h.session.session_file().unwrap();
    assert_ne!(forked, first_file);
    assert_eq!(h.session.messages().iter().filter(|m| m.role() != "system").count(), 2);

    // switchSession back to the first file.
    h.session.prompt(&format!("/ctl switch {}", first_file.display())).await.unwrap();
    assert_eq!(h.session.session_file().unwrap(), first_file);

    // fork before the first user message: an empty session.
    h.session.prompt(&format!("/ctl fork-before {first_user}")).await.unwrap();
    assert_eq!(h.session.messages().iter().filter(|m| m.role() != "system").count(), 0);

    // newSession.
    h.session.prompt("/ctl new").await.unwrap();
    let new_file = h.session.session_file().unwrap();
    assert!(new_file != first_file && new_file != forked);

    // waitForIdle and reload: the extension's setup runs again.
    h.session.prompt("/ctl idle").await.unwrap();
    assert_eq!(setups.load(Ordering::SeqCst), 1);
    h.session.prompt("/ctl reload").await.unwrap();
    assert_eq!(setups.load(Ordering::SeqCst), 2);
    let commands = h.session.extension_runner().unwrap().commands();
    assert_eq!(commands.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(), vec!["ctl"], "registered once again");

    assert_eq!(
        log_of(&log),
        vec![
            "session_tree",
            "tree -> cancelled=false",
            "session_before_fork",
            "session_shutdown:fork",
            "session_start:fork",
            "fork-at -> cancelled=false",
            "session_before_switch",
            "session_shutdown:resume",
            "session_start:resume",
            "switch -> cancelled=false",
            "session_before_fork",
            "session_shutdown:fork",
            "session_start:fork",
            "fork-before -> cancelled=false",
            "session_before_switch",
            "session_shutdown:new",
            "session_start:new",
            "new -> cancelled=false",
            "idle -> idle",
            "session_shutdown:reload",
            // The reloaded extension's handlers hear the new start; the log is shared.
            "session_start:reload",
            "reload -> reloaded",
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelling_handler_cancels_and_event_contexts_have_no_session_controls() {
    let log: Log = Arc::default();
    let canceller = Arc::new(FnExtension::new("<inline:cancel>", |pi| {
        pi.on_notify("session_before_switch", |_, _| Box::pin(async { Ok(Some(json!({"cancel": true}))) }));
        let errors: Log = Arc::default();
        let sink = errors.clone();
        pi.on_notify("agent_start", move |_, ctx| {
            let ctx = ctx.clone();
            let sink = sink.clone();
            Box::pin(async move {
                let error = ctx.new_session(None).await.unwrap_err().to_string();
                sink.lock().unwrap().push(error.clone());
                Err(error.into())
            })
        });
        Ok(())
    })) as Arc<dyn Extension>;
    let h = harness(vec![controller(log.clone(), Arc::default()), canceller], None, true).await;
    let errors: Log = Arc::default();
    let sink = errors.clone();
    let _listener = h.session.extension_runner().unwrap().on_error(move |e| sink.lock().unwrap().push(e.error.clone()));
    let before = h.session.session_file().unwrap();
    h.session.prompt("/ctl new").await.unwrap();
    assert_eq!(h.session.session_file().unwrap(), before);
    assert!(log_of(&log).contains(&"new -> cancelled=true".to_owned()), "{:?}", log_of(&log));
    h.reply(vec![step(&h.seen, text("ok"))]);
    h.session.prompt("hi").await.unwrap();
    assert_eq!(log_of(&errors), vec!["ctx.newSession() is only available in a command's context"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pi_members_reach_the_session_models_settings_commands_and_the_bus() {
    let api: Arc<Mutex<Option<ExtensionApi>>> = Arc::default();
    let heard: Arc<Mutex<Vec<Value>>> = Arc::default();
    let (slot, sink) = (api.clone(), heard.clone());
    let first = Arc::new(FnExtension::new("<inline:first>", move |pi| {
        *slot.lock().unwrap() = Some(pi.clone());
        let sink = sink.clone();
        pi.events().on("ping", move |data| {
            sink.lock().unwrap().push(data);
            Ok(())
        });
        pi.events().on("ping", |_| Err("listener failed".into()));
        pi.register_command("hello", Some("says hello"), |_, _| Box::pin(async { Ok(()) }))?;
        pi.register_provider(
            "local-llm",
            json!({"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "apiKey": "x",
                   "models": [{"id": "tiny", "contextWindow": 4096, "maxTokens": 512, "reasoning": false,
                               "input": ["text"], "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}},
                              {"id": "tiny-2", "contextWindow": 4096, "maxTokens": 512}]}),
        )?;
        Ok(())
    })) as Arc<dyn Extension>;
    let second = Arc::new(FnExtension::new("<inline:second>", |pi| {
        pi.events().emit("ping", json!({"from": "second"}));
        Ok(())
    })) as Arc<dyn Extension>;
    let h = harness(vec![first, second], None, false).await;
    let pi = api.lock().unwrap().clone().unwrap();
    assert_eq!(*heard.lock().unwrap(), vec![json!({"from": "second"})]);

    let commands = pi.get_commands().unwrap();
    let hello = commands.iter().find(|c| c.name == "hello").unwrap();
    assert_eq!((hello.description.as_deref(), hello.source.as_str()), (Some("says hello"), "extension"));
    assert!(pi.get_settings().unwrap().is_object());

    pi.set_thinking_level("off").unwrap();
    assert_eq!(pi.get_thinking_level().unwrap(), "off");

    assert!(!pi.set_model("nobody", "nothing").await.unwrap());
    assert!(pi.set_model("local-llm", "tiny").await.unwrap());
    let model = h.session.model();
    assert_eq!((model.provider.as_str(), model.id.as_str()), ("local-llm", "tiny"));
    assert_eq!(model.base_url, "http://127.0.0.1:9/v1");
    let runner = h.session.extension_runner().unwrap();
    assert_eq!(runner.registered_providers().len(), 1);
    pi.unregister_provider("local-llm");
    assert!(runner.registered_providers().is_empty());
    // The current model stays usable; the provider's other models are gone.
    assert!(!pi.set_model("local-llm", "tiny-2").await.unwrap());
}
