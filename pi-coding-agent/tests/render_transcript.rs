//! The transcript rendered with extension renderers, replayed into a terminal emulator.

use std::rc::Rc;
use std::sync::Arc;

use pi_agent_core::AgentMessage;
use pi_ai::providers::faux::{faux_assistant_message, faux_text, faux_tool_call};
use pi_ai::{TextContent, ToolResultMessage, UserBlock, UserMessage};
use pi_coding_agent::extensions::{Extension, ExtensionRunner, FnExtension};
use pi_coding_agent::messages::{CodingMessage, CustomRoleMessage};
use pi_coding_agent::render::{RenderOptions, TranscriptRenderer, render_lines, to_terminal_bytes};
use pi_coding_agent::session::SessionManager;
use pi_tui::{Box as TuiBox, ColorMode, Component, Text, Theme};
use serde_json::json;

const COLS: u16 = 60;

fn theme() -> Rc<Theme> {
    Rc::new(Theme::dark(ColorMode::Truecolor).unwrap())
}

/// An extension with the seed's audit renderer, a panicking entry renderer, a message renderer
/// and a panicking message renderer.
async fn runner() -> Arc<ExtensionRunner> {
    let ext = FnExtension::new("/audit.rs", |pi| {
        pi.register_entry_renderer("audit-note", |entry, opts, theme| {
            let data = entry.data.clone().unwrap_or_default();
            let bg_theme = theme.clone();
            let mut b = TuiBox::new(1, 1, Some(Rc::new(move |t: &str| bg_theme.bg("customMessageBg", t))));
            let tool = data["toolName"].as_str().unwrap_or("unknown");
            b.add_child(pi_tui::shared(Text::new(format!("{} {tool}", theme.fg("accent", "[audit]")), 0, 0)));
            if opts.expanded {
                b.add_child(pi_tui::shared(Text::new(theme.fg("dim", &format!("call {}", data["toolCallId"])), 0, 0)));
            }
            Some(Box::new(b) as Box<dyn Component>)
        })?;
        pi.register_entry_renderer("declined", |_, _, _| None)?;
        pi.register_entry_renderer("boom", |_, _, _| panic!("bad data"))?;
        pi.register_message_renderer("status", |message, _, theme| {
            let text =
                format!("{} status: {}", theme.fg("accent", "●"), message.details.clone().unwrap_or_default()["state"]);
            Some(Box::new(Text::new(text, 1, 0)) as Box<dyn Component>)
        })?;
        pi.register_message_renderer("fragile", |_, _, _| panic!("renderer bug"))?;
        Ok(())
    });
    let exts: Vec<Arc<dyn Extension>> = vec![Arc::new(ext)];
    let runner = ExtensionRunner::load(exts, "/tmp").await;
    assert!(runner.load_errors().is_empty(), "{:?}", runner.load_errors());
    Arc::new(runner)
}

fn custom(custom_type: &str, content: &str, display: bool, details: serde_json::Value) -> CustomRoleMessage {
    CustomRoleMessage {
        custom_type: custom_type.into(),
        content: content.into(),
        display,
        details: Some(details),
        timestamp: 1,
        ..Default::default()
    }
}

fn session() -> SessionManager {
    let mut sm = SessionManager::in_memory("/tmp");
    sm.append_message(AgentMessage::User(UserMessage::new("run the checks").into())).unwrap();
    let call = faux_tool_call("bash", json!({"command": "make check"}), Some("call-1"));
    sm.append_message(AgentMessage::Assistant(faux_assistant_message(vec![call], Default::default()).into())).unwrap();
    let result = ToolResultMessage {
        tool_call_id: "call-1".into(),
        tool_name: "bash".into(),
        content: vec![UserBlock::Text(TextContent::new("all green"))],
        ..Default::default()
    };
    sm.append_message(AgentMessage::ToolResult(result.into())).unwrap();
    sm.append_custom_entry("audit-note", Some(json!({"toolName": "bash", "toolCallId": "call-1", "at": 1}))).unwrap();
    sm.append_custom_entry("no-renderer", Some(json!({"secret": "state only"}))).unwrap();
    sm.append_custom_entry("declined", None).unwrap();
    sm.append_custom_entry("boom", None).unwrap();
    for m in [
        custom("status", "ignored by the renderer", true, json!({"state": "ready"})),
        custom("plain", "Shown with the **default** box.", true, json!({})),
        custom("hidden", "never on screen", false, json!({})),
        custom("fragile", "falls back to default", true, json!({})),
    ] {
        sm.append_custom_message_entry(&m.custom_type, m.content.clone(), m.display, m.details.clone()).unwrap();
    }
    sm.append_message(AgentMessage::Assistant(
        faux_assistant_message(vec![faux_text("Done: checks pass.")], Default::default()).into(),
    ))
    .unwrap();
    sm
}

/// Renders the branch and replays it into a vt100 screen; returns the parser.
fn screen(renderer: &TranscriptRenderer, sm: &SessionManager) -> vt100::Parser {
    let mut transcript = renderer.render_branch(sm.get_branch(None));
    let lines = render_lines(&mut transcript, COLS as usize);
    let mut parser = vt100::Parser::new(nz(lines.len() as u16 + 1), nz(COLS), 0);
    parser.process(to_terminal_bytes(&lines).as_bytes());
    parser
}

fn nz(n: u16) -> std::num::NonZero<u16> {
    std::num::NonZero::new(n).expect("non-zero")
}

fn rows(parser: &vt100::Parser) -> Vec<String> {
    parser.screen().rows(0, COLS).map(|r| r.trim_end().to_owned()).collect()
}

fn row_of(rows: &[String], needle: &str) -> usize {
    rows.iter()
        .position(|r| r.contains(needle))
        .unwrap_or_else(|| panic!("{needle:?} not on screen:\n{}", rows.join("\n")))
}

#[tokio::test]
async fn extension_renderers_draw_entries_and_messages_and_failures_are_isolated() {
    let renderer = TranscriptRenderer::new(theme(), Some(runner().await), RenderOptions::default());
    let parser = screen(&renderer, &session());
    let rows = rows(&parser);
    let text = rows.join("\n");

    // Order of the transcript.
    let order = [
        "run the checks",
        "$ make check",
        "all green",
        "[audit] bash",
        "[boom] renderer failed: bad data",
        "● status: \"ready\"",
        "[plain]",
        "Shown with the default box.",
        "[fragile]",
        "falls back to default",
        "Done: checks pass.",
    ];
    let positions: Vec<usize> = order.iter().map(|n| row_of(&rows, n)).collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "out of order {positions:?}:\n{text}");

    // Entries without a renderer, declined ones and hidden messages are not drawn.
    for absent in [
        "state only",
        "no-renderer",
        "declined",
        "never on screen",
        "[hidden]",
        "ignored by the renderer",
        "renderer bug",
    ] {
        assert!(!text.contains(absent), "{absent:?} must not be drawn:\n{text}");
    }
    // Collapsed: the audit renderer gets expanded = false.
    assert!(!text.contains("call \"call-1\""));

    // The audit box and the default box are painted with customMessageBg, the error line in red.
    let audit = row_of(&rows, "[audit] bash") as u16;
    let bg = parser.screen().cell(audit, 0).unwrap().bgcolor();
    assert_ne!(bg, vt100::Color::Default, "the audit box has a background");
    let plain = row_of(&rows, "[plain]") as u16;
    assert_eq!(parser.screen().cell(plain, 0).unwrap().bgcolor(), bg, "same customMessageBg");
    let label = parser.screen().cell(plain, 1).unwrap();
    assert!(label.bold(), "the default label is bold");
    let boom = row_of(&rows, "[boom] renderer failed") as u16;
    let col = rows[boom as usize].find('[').unwrap() as u16;
    assert_ne!(parser.screen().cell(boom, col).unwrap().fgcolor(), vt100::Color::Default, "error colour");
    // The default box: the label, a blank line, then the content.
    assert_eq!(rows[plain as usize + 1], "");
    assert_eq!(rows[plain as usize + 2].trim(), "Shown with the default box.");
}

#[tokio::test]
async fn expanded_rendering_reaches_the_renderers() {
    let options = RenderOptions { expanded: true, ..RenderOptions::default() };
    let renderer = TranscriptRenderer::new(theme(), Some(runner().await), options);
    let rows = rows(&screen(&renderer, &session()));
    assert!(rows.iter().any(|r| r.contains("call \"call-1\"")), "{}", rows.join("\n"));
}

#[test]
fn without_extensions_custom_entries_are_state_and_custom_messages_use_the_default_box() {
    let renderer = TranscriptRenderer::new(theme(), None, RenderOptions::default());
    let rows = rows(&screen(&renderer, &session()));
    let text = rows.join("\n");
    assert!(!text.contains("[audit]") && !text.contains("renderer failed"), "{text}");
    for shown in ["[status]", "ignored by the renderer", "[plain]", "[fragile]"] {
        row_of(&rows, shown);
    }
    assert!(!text.contains("never on screen"));
}

#[test]
fn skill_invocations_show_as_a_skill_line_then_the_users_text() {
    let mut sm = SessionManager::in_memory("/tmp");
    let block = "<skill name=\"demo\" location=\"/s/demo/SKILL.md\">\nReferences are relative to /s/demo.\n\nRun it.\n</skill>\n\nplease go";
    sm.append_message(AgentMessage::User(UserMessage::new(block).into())).unwrap();
    let collapsed = TranscriptRenderer::new(theme(), None, RenderOptions::default());
    let rows_c = rows(&screen(&collapsed, &sm));
    let skill = row_of(&rows_c, "[skill] demo (ctrl+o to expand)");
    assert!(row_of(&rows_c, "please go") > skill);
    assert!(!rows_c.join("\n").contains("Run it."));
    let expanded = TranscriptRenderer::new(theme(), None, RenderOptions { expanded: true, ..RenderOptions::default() });
    let rows_e = rows(&screen(&expanded, &sm));
    assert!(row_of(&rows_e, "Run it.") > row_of(&rows_e, "demo"));
    // Hidden custom roles produce nothing at all.
    let hidden = AgentMessage::Custom(CodingMessage::Custom(custom("x", "y", false, json!({})).into()));
    let mut c = collapsed.render_messages(&[hidden]);
    assert!(render_lines(&mut c, 40).is_empty());
}

/// The seed's 写法二 end to end: the extension appends an entry on `tool_result` during a real
/// SDK run; the rendered branch shows it with the extension's renderer.
#[tokio::test]
async fn an_audit_entry_appended_during_a_run_is_drawn_by_its_renderer() {
    use pi_ai::providers::faux::{FauxOptions, FauxProvider};
    use pi_coding_agent::extensions::ToolResultEvent;
    use pi_coding_agent::sdk::{CreateAgentSessionOptions, DefaultResourceLoader, create_agent_session};

    let dir = tempfile::tempdir().unwrap();
    let faux = FauxProvider::new(FauxOptions::default());
    let call = faux_tool_call("bash", json!({"command": "echo checks passed"}), Some("call-1"));
    faux.set_responses(vec![
        faux_assistant_message(vec![call], Default::default()).into(),
        faux_assistant_message(vec![faux_text("All good.")], Default::default()).into(),
    ]);
    let ext = FnExtension::new("/audit.rs", |pi| {
        let api = pi.clone();
        pi.on_sync::<ToolResultEvent>(move |e, _| {
            api.append_entry("audit-note", json!({"toolName": e.tool_name, "toolCallId": e.tool_call_id}))?;
            Ok(None)
        });
        pi.register_entry_renderer("audit-note", |entry, _, theme| {
            let tool = entry.data.as_ref().and_then(|d| d["toolName"].as_str()).unwrap_or("?").to_owned();
            Some(Box::new(Text::new(format!("{} {tool}", theme.fg("accent", "[audit]")), 1, 0)) as Box<dyn Component>)
        })?;
        Ok(())
    });
    let mut loader = DefaultResourceLoader::new(dir.path(), dir.path().join("agent"));
    loader.reload().await.unwrap();
    let session = create_agent_session(CreateAgentSessionOptions {
        cwd: Some(dir.path().to_path_buf()),
        model: Some(faux.model()),
        resource_loader: Some(loader),
        session_manager: Some(SessionManager::in_memory(dir.path())),
        stream_fn: Some(pi_agent_core::provider_stream_fn(Arc::new(faux))),
        extensions: vec![Arc::new(ext) as Arc<dyn Extension>],
        ..Default::default()
    })
    .await
    .unwrap()
    .session;
    session.bind_extensions(|_| {}).await;
    session.prompt("跑一下检查").await.unwrap();
    let renderer = TranscriptRenderer::new(theme(), session.extension_runner().cloned(), RenderOptions::default());
    let rows = rows(&session.with_session_manager(|sm| screen(&renderer, sm)));
    let audit = row_of(&rows, "[audit] bash");
    assert!(row_of(&rows, "跑一下检查") < audit);
    assert!(audit < row_of(&rows, "checks passed") && audit < row_of(&rows, "All good."), "{}", rows.join("\n"));
}
