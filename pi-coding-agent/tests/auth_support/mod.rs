//! Test support for the OAuth flows: a local authorization server on 127.0.0.1 that answers each
//! provider's endpoints from a routing function and records every request, and a scripted
//! [`AuthInteraction`] that answers prompts and acts as the browser.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use pi_coding_agent::auth::login::{AuthEvent, AuthInteraction, AuthPrompt, LoginError};
use tokio_util::sync::CancellationToken;

/// One request the server got.
#[derive(Clone, Debug)]
pub struct Seen {
    /// `POST`, `GET`.
    pub method: String,
    /// The path with its query.
    pub path: String,
    /// Lower-case names.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: String,
}

impl Seen {
    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    /// The body's form fields.
    pub fn form(&self) -> Vec<(String, String)> {
        pi_coding_agent::auth::oauth::support::query_pairs(&self.body)
    }

    /// One form field.
    pub fn field(&self, name: &str) -> Option<String> {
        self.form().into_iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }
}

/// A reply: status and JSON (or any) body.
pub type Reply = (u16, String);

/// The server: its origin and what it saw.
pub struct Server {
    /// `http://127.0.0.1:<port>`.
    pub origin: String,
    /// Every request, in order.
    pub seen: Arc<Mutex<Vec<Seen>>>,
}

impl Server {
    /// Serves with `route` (called with each request and the requests before it).
    pub fn start(route: impl Fn(&Seen, &[Seen]) -> Reply + Send + Sync + 'static) -> Server {
        Server::start_with_headers(move |request, before| {
            let (status, body) = route(request, before);
            (status, Vec::new(), body)
        })
    }

    /// Serves with `route`, whose replies also name extra response headers.
    pub fn start_with_headers(
        route: impl Fn(&Seen, &[Seen]) -> (u16, Vec<(String, String)>, String) + Send + Sync + 'static,
    ) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let origin = format!("http://{}", listener.local_addr().unwrap());
        let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
        let (log, route) = (seen.clone(), Arc::new(route));
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let (log, route) = (log.clone(), route.clone());
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream);
                    let mut first = String::new();
                    if reader.read_line(&mut first).is_err() || first.is_empty() {
                        return;
                    }
                    let mut headers = Vec::new();
                    let mut length = 0;
                    loop {
                        let mut line = String::new();
                        reader.read_line(&mut line).unwrap();
                        let line = line.trim_end();
                        if line.is_empty() {
                            break;
                        }
                        let (k, v) = line.split_once(':').unwrap();
                        let (k, v) = (k.trim().to_lowercase(), v.trim().to_owned());
                        if k == "content-length" {
                            length = v.parse().unwrap();
                        }
                        headers.push((k, v));
                    }
                    let mut buf = vec![0; length];
                    reader.read_exact(&mut buf).unwrap();
                    let mut parts = first.split_whitespace();
                    let request = Seen {
                        method: parts.next().unwrap_or("").to_owned(),
                        path: parts.next().unwrap_or("").to_owned(),
                        headers,
                        body: String::from_utf8(buf).unwrap(),
                    };
                    let (status, extra, body) = {
                        let mut log = log.lock().unwrap();
                        let reply = route(&request, &log);
                        log.push(request);
                        reply
                    };
                    let kind = if body.starts_with("event:") || body.starts_with("data:") {
                        "text/event-stream"
                    } else {
                        "application/json"
                    };
                    let extra: String = extra.iter().map(|(k, v)| format!("{k}: {v}\r\n")).collect();
                    let head = format!(
                        "HTTP/1.1 {status} X\r\ncontent-type: {kind}\r\ncontent-length: {}\r\n{extra}connection: close\r\n\r\n",
                        body.len()
                    );
                    let mut stream = reader.into_inner();
                    let _ = stream.write_all(head.as_bytes());
                    let _ = stream.write_all(body.as_bytes());
                });
            }
        });
        Server { origin, seen }
    }

    /// The requests to paths starting with `prefix`.
    pub fn requests(&self, prefix: &str) -> Vec<Seen> {
        self.seen.lock().unwrap().iter().filter(|s| s.path.starts_with(prefix)).cloned().collect()
    }
}

/// What a scripted prompt answers.
#[derive(Clone, Debug)]
pub enum Answer {
    /// This text.
    Text(String),
    /// Never answers (the browser callback wins).
    Wait,
    /// Dismissed.
    Cancel,
}

/// The browser: what to do with an authorization URL.
pub type Browser = Arc<dyn Fn(&str) + Send + Sync>;

/// A scripted interaction: answers prompts in order, records prompts and events, and calls
/// `browser` with each authorization URL.
pub struct Scripted {
    answers: Mutex<Vec<Answer>>,
    /// The prompts asked.
    pub prompts: Mutex<Vec<AuthPrompt>>,
    /// The events shown.
    pub events: Mutex<Vec<AuthEvent>>,
    browser: Option<Browser>,
    cancel: CancellationToken,
}

impl Scripted {
    /// Answers `answers` in order; `browser` gets each authorization URL.
    pub fn new(answers: Vec<Answer>, browser: Option<Browser>) -> Self {
        Scripted {
            answers: Mutex::new(answers.into_iter().rev().collect()),
            prompts: Mutex::default(),
            events: Mutex::default(),
            browser,
            cancel: CancellationToken::new(),
        }
    }
}

#[async_trait]
impl AuthInteraction for Scripted {
    async fn prompt(&self, prompt: AuthPrompt) -> Result<String, LoginError> {
        self.prompts.lock().unwrap().push(prompt);
        let answer = self.answers.lock().unwrap().pop().unwrap_or(Answer::Cancel);
        match answer {
            Answer::Text(t) => Ok(t),
            Answer::Wait => std::future::pending().await,
            Answer::Cancel => Err(LoginError::Cancelled),
        }
    }

    fn notify(&self, event: AuthEvent) {
        if let (AuthEvent::AuthUrl { url, .. }, Some(browser)) = (&event, &self.browser) {
            let (browser, url) = (browser.clone(), url.clone());
            std::thread::spawn(move || browser(&url));
        }
        self.events.lock().unwrap().push(event);
    }

    fn cancel(&self) -> CancellationToken {
        self.cancel.clone()
    }
}

/// A query parameter of `url`.
pub fn param(url: &str, name: &str) -> Option<String> {
    let query = url.split_once('?')?.1;
    let pairs = pi_coding_agent::auth::oauth::support::query_pairs(query);
    pairs.into_iter().find(|(k, _)| k == name).map(|(_, v)| v)
}

/// A browser that follows the authorization URL's `redirect_uri` (or `callback_url`) with `query`
/// added to it, and records the page status.
pub fn redirecting_browser(query: impl Fn(&str) -> String + Send + Sync + 'static) -> (Browser, Arc<Mutex<Vec<u16>>>) {
    let statuses: Arc<Mutex<Vec<u16>>> = Arc::default();
    let log = statuses.clone();
    let browser: Browser = Arc::new(move |url: &str| {
        let redirect = param(url, "redirect_uri").or_else(|| param(url, "callback_url")).unwrap();
        let sep = if redirect.contains('?') { '&' } else { '?' };
        let target = format!("{redirect}{sep}{}", query(url));
        let status = get_status(&target);
        log.lock().unwrap().push(status);
    });
    (browser, statuses)
}

/// A plain HTTP GET of a loopback URL; the status.
pub fn get_status(url: &str) -> u16 {
    let rest = url.strip_prefix("http://").unwrap();
    let (authority, path) = rest.split_at(rest.find('/').unwrap());
    let authority = authority.replace("localhost", "127.0.0.1");
    let mut stream = std::net::TcpStream::connect(&authority).unwrap();
    write!(stream, "GET {path} HTTP/1.1\r\nhost: {authority}\r\nconnection: close\r\n\r\n").unwrap();
    let mut text = String::new();
    stream.read_to_string(&mut text).unwrap();
    text.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// S256 of a verifier, base64url.
pub fn challenge_of(verifier: &str) -> String {
    pi_coding_agent::auth::oauth::support::Pkce::from_verifier(verifier.to_owned()).challenge
}

/// The keys of a JSON object, in order.
pub fn keys(value: &serde_json::Map<String, serde_json::Value>) -> Vec<&str> {
    value.keys().map(String::as_str).collect()
}

/// The browser's page statuses once `n` arrived (its thread records each after reading the page,
/// which may be a moment after the flow finished).
pub fn pages_after(pages: &Mutex<Vec<u16>>, n: usize) -> Vec<u16> {
    for _ in 0..1000 {
        if pages.lock().unwrap().len() >= n {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    pages.lock().unwrap().clone()
}
