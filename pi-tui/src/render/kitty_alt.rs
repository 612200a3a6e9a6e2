//! The alternate screen's rows and Kitty images (pi-tui's `TuiAltScreen.doRender` image path and
//! `prepareKittyScreen`): which rows a frame rewrites, when image placements are cleared, images
//! drawn after the text, uploads kept while they scroll away so a returning image is placed
//! again without sending its data (`a=p`), the oldest off-screen uploads deleted past pi's
//! limits, and every image deleted on a clearing redraw and on leaving.

use super::is_image_line;
use super::kitty::{DELETE_ALL_KITTY_IMAGES, DELETE_ALL_KITTY_PLACEMENTS, KITTY_PREFIX, delete_kitty_image};

/// pi's limits of the uploads kept for images that are not on screen.
const MAX_CACHED_OFFSCREEN_IMAGES: usize = 16;
const MAX_CACHED_OFFSCREEN_TRANSMISSION_BYTES: usize = 32 * 1024 * 1024;
const MAX_CACHED_OFFSCREEN_DECODED_BYTES: usize = 64 * 1024 * 1024;

/// The placement keys a placement-only command keeps (pi's `KITTY_PLACEMENT_CONTROL_KEYS`).
const PLACEMENT_KEYS: &[&str] = &["i", "p", "x", "y", "w", "h", "X", "Y", "c", "r", "C", "U", "z", "P", "Q", "H", "V"];

/// The terminal's inline image protocol (pi's `capabilities.images`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageProtocol {
    /// The Kitty graphics protocol.
    Kitty,
    /// iTerm2's inline images.
    Iterm2,
}

/// The image protocol pi-tui detects from the environment (`detectCapabilities`'s `images`):
/// `PI_IMAGE_PROTOCOL` first, none under tmux and screen, Kitty for herdr, rex, Orca (when it
/// says so), kitty, Ghostty, WezTerm and Warp, iTerm2 for iTerm.
pub fn image_protocol_from_env(get: impl Fn(&str) -> Option<String>) -> Option<ImageProtocol> {
    let lower = |k: &str| get(k).map(|v| v.to_lowercase()).unwrap_or_default();
    let set = |k: &str| get(k).is_some();
    let (program, term) = (lower("TERM_PROGRAM"), lower("TERM"));
    let detected = if set("TMUX") || term.starts_with("tmux") || term.starts_with("screen") {
        None
    } else if program == "herdr"
        || program == "rex"
        || (program == "orca" && get("ORCA_IMAGE_PROTOCOL").as_deref() == Some("kitty"))
        || set("KITTY_WINDOW_ID")
        || program == "kitty"
        || program == "ghostty"
        || term.contains("ghostty")
        || set("GHOSTTY_RESOURCES_DIR")
        || set("WEZTERM_PANE")
        || program == "wezterm"
        || program == "warpterminal"
        || set("WARP_SESSION_ID")
        || set("WARP_TERMINAL_SESSION_UUID")
    {
        Some(ImageProtocol::Kitty)
    } else if set("ITERM_SESSION_ID") || program == "iterm.app" {
        Some(ImageProtocol::Iterm2)
    } else {
        None
    };
    match lower("PI_IMAGE_PROTOCOL").as_str() {
        "kitty" => Some(ImageProtocol::Kitty),
        "iterm2" => Some(ImageProtocol::Iterm2),
        "none" | "0" => None,
        _ => detected,
    }
}

/// An image whose data the terminal holds.
#[derive(Debug, Clone)]
struct Upload {
    id: u32,
    /// The transmission that sent it (a new one means new data).
    transmission: String,
    bytes: usize,
    decoded: usize,
}

/// The placement-only form of a line's Kitty transmission (pi's `getKittyImagePlacement`).
struct Placement {
    upload: Upload,
    replacement: String,
}

/// The first command's controls of a line (`ESC _ G <controls> ;`) and where it starts.
fn first_controls(line: &str) -> Option<(usize, &str)> {
    let start = line.find(KITTY_PREFIX)?;
    let body = &line[start + KITTY_PREFIX.len()..];
    let end = body.find(';')?;
    Some((start, &body[..end]))
}

fn control<'a>(controls: &'a str, key: &str) -> Option<&'a str> {
    controls.split(',').find_map(|c| c.split_once('=').filter(|(k, _)| *k == key).map(|(_, v)| v))
}

/// The rows an image line covers (its `r=`, pi's `getKittyImagePlacementRows`).
fn placement_rows(line: &str) -> Option<usize> {
    let (_, controls) = first_controls(line)?;
    let rows: usize = control(controls, "r")?.parse().ok()?;
    (rows > 0).then_some(rows)
}

/// The PNG size in the first bytes of a transmission's base64 payload, as decoded RGBA bytes.
fn decoded_bytes(payload: &str) -> usize {
    use base64::Engine;
    let head = payload.get(..32).unwrap_or("");
    let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(head) else { return 0 };
    if bytes.len() < 24 || &bytes[..8] != b"\x89PNG\r\n\x1a\n" {
        return 0;
    }
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize;
    be(&bytes[16..20]) * be(&bytes[20..24]) * 4
}

fn placement(line: &str) -> Option<Placement> {
    let (start, controls) = first_controls(line)?;
    let id: u32 = control(controls, "i")?.parse().ok().filter(|&i| i > 0)?;
    // The transmission runs to the end of its last chunk (`m=1` continues it).
    let mut command_start = start;
    let mut command_controls = controls;
    let end = loop {
        let terminator =
            command_start + KITTY_PREFIX.len() + line[command_start + KITTY_PREFIX.len()..].find("\x1b\\")?;
        let end = terminator + 2;
        if control(command_controls, "m") != Some("1") {
            break end;
        }
        command_start = end;
        let rest = line.get(command_start..)?.strip_prefix(KITTY_PREFIX)?;
        command_controls = &rest[..rest.find(';')?];
    };
    let kept: Vec<&str> =
        controls.split(',').filter(|c| PLACEMENT_KEYS.contains(&c.split('=').next().unwrap_or(""))).collect();
    let sequence = format!("\x1b_Ga=p,q=2,{}\x1b\\", kept.join(","));
    let payload_start = start + KITTY_PREFIX.len() + controls.len() + 1;
    let transmission = line[start..end].to_owned();
    Some(Placement {
        upload: Upload {
            id,
            bytes: end - start,
            decoded: decoded_bytes(line.get(payload_start..end).unwrap_or("")),
            transmission,
        },
        replacement: format!("{}{sequence}{}", &line[..start], &line[end..]),
    })
}

/// The alternate screen's image state.
#[derive(Debug, Clone, Default)]
pub struct AltImages {
    protocol: Option<ImageProtocol>,
    /// Uploaded images, least recently drawn first.
    uploads: Vec<Upload>,
}

impl AltImages {
    /// Use `protocol` (what pi reads from its capabilities when the screen starts).
    pub fn set_protocol(&mut self, protocol: Option<ImageProtocol>) {
        self.protocol = protocol;
    }

    /// Forget the uploads (entering the screen).
    pub fn clear(&mut self) {
        self.uploads.clear();
    }

    fn kitty(&self) -> bool {
        self.protocol == Some(ImageProtocol::Kitty)
    }

    /// What leaving writes first: every Kitty image deleted (pi's `deleteKittyImages`).
    pub fn leave(&mut self) -> &'static str {
        self.uploads.clear();
        if self.kitty() { DELETE_ALL_KITTY_IMAGES } else { "" }
    }

    /// pi's `prepareKittyScreen`: uploaded images become placements, and the oldest off-screen
    /// uploads past the limits are deleted.
    fn prepare<S: AsRef<str>>(&mut self, screen: &[S]) -> (Vec<String>, String) {
        let mut visible = Vec::new();
        let lines = screen
            .iter()
            .map(|line| {
                let line = line.as_ref();
                let Some(p) = placement(line) else { return line.to_owned() };
                visible.push(p.upload.id);
                let cached = self.uploads.iter().position(|u| u.id == p.upload.id).map(|i| self.uploads.remove(i));
                let same = cached.is_some_and(|c| c.transmission == p.upload.transmission);
                self.uploads.push(p.upload);
                if same { p.replacement } else { line.to_owned() }
            })
            .collect();
        let offscreen = |u: &&Upload| !visible.contains(&u.id);
        let (mut count, mut bytes, mut decoded) = (0, 0, 0);
        for u in self.uploads.iter().filter(offscreen) {
            count += 1;
            bytes += u.bytes;
            decoded += u.decoded;
        }
        let mut evicted = String::new();
        let mut i = 0;
        while i < self.uploads.len() {
            if count <= MAX_CACHED_OFFSCREEN_IMAGES
                && bytes <= MAX_CACHED_OFFSCREEN_TRANSMISSION_BYTES
                && decoded <= MAX_CACHED_OFFSCREEN_DECODED_BYTES
            {
                break;
            }
            if visible.contains(&self.uploads[i].id) {
                i += 1;
                continue;
            }
            let u = self.uploads.remove(i);
            evicted.push_str(&delete_kitty_image(u.id));
            count -= 1;
            bytes -= u.bytes;
            decoded -= u.decoded;
        }
        (lines, evicted)
    }

    /// The output of one frame's rows (between the synchronized-output markers, before the
    /// cursor): `screen` is exactly the terminal's rows, `previous` what is on screen, `full` a
    /// redraw of everything.
    pub fn draw<S: AsRef<str>, P: AsRef<str>>(&mut self, screen: &[S], previous: &[P], full: bool) -> String {
        let height = screen.len();
        let changed: Vec<bool> =
            (0..height).map(|r| previous.get(r).map(AsRef::as_ref) != Some(screen[r].as_ref())).collect();
        let anchors = (0..height).any(|r| {
            changed[r]
                && (is_image_line(screen[r].as_ref()) || previous.get(r).is_some_and(|p| is_image_line(p.as_ref())))
        });
        let cells = !anchors
            && self.kitty()
            && changed.iter().any(|&c| c)
            && screen.iter().enumerate().any(|(row, line)| {
                placement_rows(line.as_ref())
                    .is_some_and(|rows| (row..row + rows).any(|r| changed.get(r) == Some(&true)))
            });
        let images_need_redraw = anchors || cells;
        let redraw_images = full || images_need_redraw;
        let had_uploads = !self.uploads.is_empty();
        let (prepared, evicted) = if redraw_images && self.kitty() {
            let (lines, evicted) = self.prepare(screen);
            (Some(lines), evicted)
        } else {
            (None, String::new())
        };
        let line = |r: usize| prepared.as_ref().map_or(screen[r].as_ref(), |p| p[r].as_str());
        let mut out = String::new();
        if full {
            if self.kitty() && had_uploads {
                // Kitty frees unplaced image data on ED 2; every row is cleared with EL 2 anyway.
                out.push_str(DELETE_ALL_KITTY_PLACEMENTS);
            } else {
                out.push_str(if self.kitty() { DELETE_ALL_KITTY_IMAGES } else { "" });
                out.push_str("\x1b[2J");
            }
        } else if images_need_redraw {
            match self.protocol {
                Some(ImageProtocol::Iterm2) => out.push_str("\x1b[2J"),
                Some(ImageProtocol::Kitty) => out.push_str(DELETE_ALL_KITTY_PLACEMENTS),
                None => {}
            }
        }
        out.push_str(&evicted);
        let rewrite = |r: usize| full || images_need_redraw || changed[r];
        if redraw_images && self.kitty() && screen.iter().any(|l| is_image_line(l.as_ref())) {
            // Images last, after every clear and text write, so nothing overwrites their cells.
            (0..height).filter(|&r| rewrite(r)).for_each(|r| out.push_str(&format!("\x1b[{};1H\x1b[2K", r + 1)));
            for image_pass in [false, true] {
                for r in (0..height).filter(|&r| rewrite(r) && is_image_line(line(r)) == image_pass) {
                    out.push_str(&format!("\x1b[{};1H{}", r + 1, line(r)));
                }
            }
        } else {
            for r in (0..height).filter(|&r| rewrite(r)) {
                out.push_str(&format!("\x1b[{};1H\x1b[2K{}", r + 1, line(r)));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placements_keep_the_placement_keys_and_span_chunks() {
        let line = "ab\x1b_Ga=T,f=100,q=2,C=1,c=4,r=2,i=9,m=1;AAAA\x1b\\\x1b_Gm=0;BB\x1b\\cd";
        let p = placement(line).expect("a placement");
        assert_eq!(p.replacement, "ab\x1b_Ga=p,q=2,C=1,c=4,r=2,i=9\x1b\\cd");
        assert_eq!(p.upload.bytes, line.len() - 4);
        assert!(placement("\x1b_Ga=T,f=100;AAAA\x1b\\").is_none(), "no id");
        assert_eq!(placement_rows(line), Some(2));
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
        };
        assert_eq!(image_protocol_from_env(env(&[("KITTY_WINDOW_ID", "1")])), Some(ImageProtocol::Kitty));
        assert_eq!(image_protocol_from_env(env(&[("KITTY_WINDOW_ID", "1"), ("TMUX", "x")])), None);
        assert_eq!(
            image_protocol_from_env(env(&[("TMUX", "x"), ("PI_IMAGE_PROTOCOL", "kitty")])),
            Some(ImageProtocol::Kitty)
        );
        assert_eq!(image_protocol_from_env(env(&[("TERM_PROGRAM", "iTerm.app")])), Some(ImageProtocol::Iterm2));
    }
}
