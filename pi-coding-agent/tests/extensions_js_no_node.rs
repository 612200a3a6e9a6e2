//! Without Node.js, a JavaScript or TypeScript extension fails to load with one message that says
//! what to install, and everything else loads and runs. (Its own test binary: it points the host
//! at a Node.js that does not exist.)

use std::sync::Arc;

use pi_coding_agent::extensions::subprocess::SubprocessExtension;
use pi_coding_agent::extensions::{Extension, ExtensionRunner, FnExtension};

#[tokio::test]
async fn without_node_the_extension_fails_with_what_to_install_and_the_rest_loads() {
    pi_coding_agent::extensions::node::set_node_path(Some("/nonexistent/node".into()));
    let dir = tempfile::tempdir().unwrap();
    let ts = dir.path().join("hello.ts");
    std::fs::write(&ts, "export default function (pi) {}\n").unwrap();
    let rust = FnExtension::new("<inline:rust>", |pi| {
        pi.register_command("still-here", None, |_, _| Box::pin(async { Ok(()) }))?;
        Ok(())
    });
    let exts: Vec<Arc<dyn Extension>> = vec![Arc::new(SubprocessExtension::new(ts.to_string_lossy())), Arc::new(rust)];
    let runner = ExtensionRunner::load(exts, dir.path().to_string_lossy()).await;
    let errors = runner.load_errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].error.starts_with(
            "Failed to load extension: JavaScript and TypeScript extensions need Node.js 22.7 or newer (/nonexistent/node: "
        ),
        "{}",
        errors[0].error
    );
    assert!(errors[0].error.ends_with("or set PI_NODE to the node executable"), "{}", errors[0].error);
    assert!(runner.command("still-here").is_some());
}
