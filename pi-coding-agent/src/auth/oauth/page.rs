//! The pages the callback server answers the browser with (pi-ai's `oauthSuccessHtml` and
//! `oauthErrorHtml`, byte for byte).

const TEMPLATE: &str = include_str!("page.html");

fn escape(value: &str) -> String {
    value.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;").replace('\'', "&#39;")
}

fn render(heading: &str, message: &str, details: Option<&str>) -> String {
    let details = details.map(|d| format!("<div class=\"details\">{}</div>", escape(d))).unwrap_or_default();
    TEMPLATE
        .replace("@@HEADING@@", heading)
        .replace("@@MESSAGE@@", &escape(message))
        .replace("<div class=\"details\">@@DETAILS@@</div>", &details)
}

/// "Authentication successful" with `message`.
pub fn success_page(message: &str) -> String {
    render("Authentication successful", message, None)
}

/// "Authentication failed" with `message` and optional details.
pub fn error_page(message: &str, details: Option<&str>) -> String {
    render("Authentication failed", message, details)
}
