//! Key parsing and matching, ported from pi's `keys.ts`.

use super::is_kitty_protocol_active as kitty;
use super::legacy::{legacy_key_id, legacy_modifier_sequences, legacy_sequences};

const SHIFT: u32 = 1;
const ALT: u32 = 2;
const CTRL: u32 = 4;
const SUPER: u32 = 8;
const LOCK_MASK: u32 = 64 + 128;

const CP_ESCAPE: i64 = 27;
const CP_TAB: i64 = 9;
const CP_ENTER: i64 = 13;
const CP_SPACE: i64 = 32;
const CP_BACKSPACE: i64 = 127;
const CP_KP_ENTER: i64 = 57414;

const UP: i64 = -1;
const DOWN: i64 = -2;
const RIGHT: i64 = -3;
const LEFT: i64 = -4;
const DELETE: i64 = -10;
const INSERT: i64 = -11;
const PAGE_UP: i64 = -12;
const PAGE_DOWN: i64 = -13;
const HOME: i64 = -14;
const END: i64 = -15;
const F1: i64 = -21;
const F12: i64 = -32;

const SYMBOL_KEYS: &str = "`-=[]\\;',./!@#$%^&*()_+|~{}:<>?";
const SHIFTED_SYMBOL_KEYS: &str = "~!@#$%^&*()_+|{}:<>?";

fn is_symbol(cp: i64, set: &str) -> bool {
    u32::try_from(cp).ok().and_then(char::from_u32).is_some_and(|c| set.contains(c))
}

fn normalize_functional(cp: i64) -> i64 {
    match cp {
        57399..=57408 => cp - 57399 + 48,
        57409 => 46,
        57410 => 47,
        57411 => 42,
        57412 => 45,
        57413 => 43,
        57415 => 61,
        57416 => 44,
        57417 => LEFT,
        57418 => RIGHT,
        57419 => UP,
        57420 => DOWN,
        57421 => PAGE_UP,
        57422 => PAGE_DOWN,
        57423 => HOME,
        57424 => END,
        57425 => INSERT,
        57426 => DELETE,
        _ => cp,
    }
}

fn normalize_shifted_letter(cp: i64, modifier: u32) -> i64 {
    if (modifier & !LOCK_MASK) & SHIFT != 0 && (65..=90).contains(&cp) { cp + 32 } else { cp }
}

fn logical_shifted_symbol(cp: Option<i64>, modifier: u32, set: &str) -> Option<(i64, u32)> {
    let cp = cp?;
    if modifier & SHIFT == 0 {
        return None;
    }
    let n = normalize_functional(cp);
    is_symbol(n, set).then_some((n, modifier & !SHIFT))
}

#[derive(Debug, Clone, Copy)]
struct Kitty {
    codepoint: i64,
    shifted: Option<i64>,
    base: Option<i64>,
    modifier: u32,
    event: u8,
}

fn digits(s: &str) -> Option<i64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

fn event_type(s: Option<&str>) -> u8 {
    match s.and_then(digits) {
        Some(2) => 2,
        Some(3) => 3,
        _ => 1,
    }
}

/// `^\x1b\[(\d+)(?::(\d*))?(?::(\d+))?(?:;(\d+))?(?::(\d+))?u$`
fn parse_csi_u(data: &str) -> Option<Kitty> {
    let body = data.strip_prefix("\x1b[")?.strip_suffix('u')?;
    let (keys, mods) = match body.split_once(';') {
        Some((k, m)) => (k, Some(m)),
        None => (body, None),
    };
    let kp: Vec<&str> = keys.split(':').collect();
    let codepoint = digits(kp[0])?;
    let mut shifted = None;
    let mut base = None;
    let mut event = None;
    match kp.len() {
        1 => {}
        2 => {
            if !kp[1].is_empty() {
                shifted = Some(digits(kp[1])?);
            }
        }
        3 => {
            if !kp[1].is_empty() {
                shifted = Some(digits(kp[1])?);
            }
            base = Some(digits(kp[2])?);
        }
        4 if mods.is_none() => {
            if !kp[1].is_empty() {
                shifted = Some(digits(kp[1])?);
            }
            base = Some(digits(kp[2])?);
            event = Some(kp[3]);
            digits(kp[3])?;
        }
        _ => return None,
    }
    let mut modv = 1;
    if let Some(m) = mods {
        let (mv, ev) = match m.split_once(':') {
            Some((a, b)) => (a, Some(b)),
            None => (m, None),
        };
        modv = digits(mv)?;
        if let Some(e) = ev {
            digits(e)?;
            event = Some(e);
        }
    }
    Some(Kitty { codepoint, shifted, base, modifier: (modv - 1).max(0) as u32, event: event_type(event) })
}

/// `1;mod(:event)?` before a final byte; returns (mod value, event).
fn parse_mod_event(s: &str) -> Option<(i64, u8)> {
    let s = s.strip_prefix("1;")?;
    let (m, e) = match s.split_once(':') {
        Some((m, e)) => (m, Some(e)),
        None => (s, None),
    };
    if let Some(e) = e {
        digits(e)?;
    }
    Some((digits(m)?, event_type(e)))
}

fn parse_kitty(data: &str) -> Option<Kitty> {
    if let Some(k) = parse_csi_u(data) {
        return Some(k);
    }
    let body = data.strip_prefix("\x1b[")?;
    let last = body.chars().last()?;
    let inner = &body[..body.len() - last.len_utf8()];
    let simple = |cp: i64, modv: i64, event: u8| Kitty {
        codepoint: cp,
        shifted: None,
        base: None,
        modifier: (modv - 1).max(0) as u32,
        event,
    };
    match last {
        'A' | 'B' | 'C' | 'D' => {
            let (m, e) = parse_mod_event(inner)?;
            let cp = match last {
                'A' => UP,
                'B' => DOWN,
                'C' => RIGHT,
                _ => LEFT,
            };
            Some(simple(cp, m, e))
        }
        '~' => {
            let (num, rest) = match inner.split_once(';') {
                Some((n, r)) => (n, Some(r)),
                None => (inner, None),
            };
            let (modv, e) = match rest {
                Some(r) => {
                    let (m, e) = match r.split_once(':') {
                        Some((m, e)) => (m, Some(e)),
                        None => (r, None),
                    };
                    if let Some(e) = e {
                        digits(e)?;
                    }
                    (digits(m)?, event_type(e))
                }
                None => (1, 1),
            };
            let cp = match digits(num)? {
                2 => INSERT,
                3 => DELETE,
                5 => PAGE_UP,
                6 => PAGE_DOWN,
                7 => HOME,
                8 => END,
                n @ 11..=15 => F1 - (n - 11),
                n @ 17..=21 => F1 - (n - 12),
                23 => F1 - 10,
                24 => F12,
                _ => return None,
            };
            Some(simple(cp, modv, e))
        }
        'H' | 'F' => {
            let (m, e) = parse_mod_event(inner)?;
            Some(simple(if last == 'H' { HOME } else { END }, m, e))
        }
        'P' | 'Q' | 'S' => {
            let (m, e) = if inner.is_empty() { (1, 1) } else { parse_mod_event(inner)? };
            let cp = match last {
                'P' => F1,
                'Q' => F1 - 1,
                _ => F1 - 3,
            };
            Some(simple(cp, m, e))
        }
        _ => None,
    }
}

fn matches_kitty(data: &str, expected_cp: i64, expected_mod: u32) -> bool {
    let Some(p) = parse_kitty(data) else {
        return false;
    };
    let actual_mod = p.modifier & !LOCK_MASK;
    let expected = expected_mod & !LOCK_MASK;
    let ncp = normalize_shifted_letter(normalize_functional(p.codepoint), p.modifier);
    let necp = normalize_shifted_letter(normalize_functional(expected_cp), expected_mod);
    if actual_mod == expected && ncp == necp {
        return true;
    }
    if let Some((cp, m)) = logical_shifted_symbol(p.shifted, actual_mod, SYMBOL_KEYS)
        && (m & !LOCK_MASK) == expected
        && cp == normalize_functional(expected_cp)
    {
        return true;
    }
    if actual_mod != expected {
        return false;
    }
    if p.base == Some(expected_cp) {
        let latin = (97..=122).contains(&ncp);
        if !latin && !is_symbol(ncp, SYMBOL_KEYS) {
            return true;
        }
    }
    false
}

fn parse_modify_other_keys(data: &str) -> Option<(i64, u32)> {
    let body = data.strip_prefix("\x1b[27;")?.strip_suffix('~')?;
    let (m, cp) = body.split_once(';')?;
    Some((digits(cp)?, (digits(m)? - 1).max(0) as u32))
}

fn matches_mok(data: &str, cp: i64, modifier: u32) -> bool {
    parse_modify_other_keys(data) == Some((cp, modifier))
}

fn matches_printable_mok(data: &str, cp: i64, modifier: u32) -> bool {
    let Some((pcp, pmod)) = parse_modify_other_keys(data) else {
        return false;
    };
    if pmod == modifier && normalize_shifted_letter(pcp, pmod) == normalize_shifted_letter(cp, modifier) {
        return true;
    }
    logical_shifted_symbol(Some(pcp), pmod, SHIFTED_SYMBOL_KEYS) == Some((cp, modifier))
}

fn is_windows_terminal() -> bool {
    std::env::var_os("WT_SESSION").is_some()
        && std::env::var_os("SSH_CONNECTION").is_none()
        && std::env::var_os("SSH_CLIENT").is_none()
        && std::env::var_os("SSH_TTY").is_none()
}

fn matches_raw_backspace(data: &str, modifier: u32) -> bool {
    match data {
        "\x7f" => modifier == 0,
        "\x08" => {
            if is_windows_terminal() {
                modifier == CTRL
            } else {
                modifier == 0
            }
        }
        _ => false,
    }
}

fn raw_ctrl_char(key: char) -> Option<char> {
    let c = key.to_ascii_lowercase();
    if c.is_ascii_lowercase() || matches!(c, '[' | '\\' | ']' | '_') {
        return char::from_u32(c as u32 & 0x1f);
    }
    (c == '-').then_some('\x1f')
}

struct KeyId {
    key: String,
    modifier: u32,
}

fn parse_key_id(id: &str) -> Option<KeyId> {
    let mut key = id.to_lowercase();
    let mut modifier = 0;
    loop {
        let found = [("shift", SHIFT), ("alt", ALT), ("ctrl", CTRL), ("super", SUPER)]
            .into_iter()
            .find(|(name, _)| key.starts_with(&format!("{name}+")));
        let Some((name, bit)) = found else { break };
        if modifier & bit != 0 {
            return None;
        }
        modifier |= bit;
        key = key[name.len() + 1..].to_string();
    }
    if key.is_empty() || (key.contains('+') && key != "+") {
        return None;
    }
    Some(KeyId { key, modifier })
}

fn match_navigation(data: &str, key: &str, cp: i64, modifier: u32) -> bool {
    if modifier == 0 {
        return legacy_sequences(key).contains(&data) || matches_kitty(data, cp, 0);
    }
    if legacy_modifier_sequences(key, modifier).contains(&data) {
        return true;
    }
    matches_kitty(data, cp, modifier)
}

/// Whether raw input `data` is the key `key_id` (e.g. `"shift+enter"`, `"ctrl+c"`, `"alt+left"`).
pub fn matches_key(data: &str, key_id: &str) -> bool {
    let Some(KeyId { key, modifier }) = parse_key_id(key_id) else {
        return false;
    };
    let k = kitty();
    match key.as_str() {
        "escape" | "esc" => {
            return modifier == 0
                && (data == "\x1b" || matches_kitty(data, CP_ESCAPE, 0) || matches_mok(data, CP_ESCAPE, 0));
        }
        "space" => {
            if !k && ((modifier == CTRL && data == "\0") || (modifier == ALT && data == "\x1b ")) {
                return true;
            }
            if modifier == 0 {
                return data == " " || matches_kitty(data, CP_SPACE, 0) || matches_mok(data, CP_SPACE, 0);
            }
            return matches_kitty(data, CP_SPACE, modifier) || matches_mok(data, CP_SPACE, modifier);
        }
        "tab" => {
            if modifier == SHIFT {
                return data == "\x1b[Z" || matches_kitty(data, CP_TAB, SHIFT) || matches_mok(data, CP_TAB, SHIFT);
            }
            if modifier == 0 {
                return data == "\t" || matches_kitty(data, CP_TAB, 0);
            }
            return matches_kitty(data, CP_TAB, modifier) || matches_mok(data, CP_TAB, modifier);
        }
        "enter" | "return" => {
            let kit = |m| matches_kitty(data, CP_ENTER, m) || matches_kitty(data, CP_KP_ENTER, m);
            if modifier == SHIFT {
                if kit(SHIFT) || matches_mok(data, CP_ENTER, SHIFT) {
                    return true;
                }
                return k && (data == "\x1b\r" || data == "\n");
            }
            if modifier == ALT {
                if kit(ALT) || matches_mok(data, CP_ENTER, ALT) {
                    return true;
                }
                return !k && data == "\x1b\r";
            }
            if modifier == 0 {
                return data == "\r" || (!k && data == "\n") || data == "\x1bOM" || kit(0);
            }
            return kit(modifier) || matches_mok(data, CP_ENTER, modifier);
        }
        "backspace" => {
            if modifier == ALT {
                return data == "\x1b\x7f"
                    || data == "\x1b\x08"
                    || matches_kitty(data, CP_BACKSPACE, ALT)
                    || matches_mok(data, CP_BACKSPACE, ALT);
            }
            if modifier == CTRL || modifier == 0 {
                return matches_raw_backspace(data, modifier)
                    || matches_kitty(data, CP_BACKSPACE, modifier)
                    || matches_mok(data, CP_BACKSPACE, modifier);
            }
            return matches_kitty(data, CP_BACKSPACE, modifier) || matches_mok(data, CP_BACKSPACE, modifier);
        }
        "insert" => return match_navigation(data, "insert", INSERT, modifier),
        "delete" => return match_navigation(data, "delete", DELETE, modifier),
        "home" => return match_navigation(data, "home", HOME, modifier),
        "end" => return match_navigation(data, "end", END, modifier),
        "pageup" => return match_navigation(data, "pageup", PAGE_UP, modifier),
        "pagedown" => return match_navigation(data, "pagedown", PAGE_DOWN, modifier),
        "clear" => {
            return if modifier == 0 {
                legacy_sequences("clear").contains(&data)
            } else {
                legacy_modifier_sequences("clear", modifier).contains(&data)
            };
        }
        "up" | "down" => {
            let (cp, alt_seq) = if key == "up" { (UP, "\x1bp") } else { (DOWN, "\x1bn") };
            if modifier == ALT {
                return data == alt_seq || matches_kitty(data, cp, ALT);
            }
            return match_navigation(data, &key, cp, modifier);
        }
        "left" | "right" => {
            let left = key == "left";
            let cp = if left { LEFT } else { RIGHT };
            if modifier == ALT {
                let (csi, upper, lower) =
                    if left { ("\x1b[1;3D", "\x1bB", "\x1bb") } else { ("\x1b[1;3C", "\x1bF", "\x1bf") };
                return data == csi || (!k && data == upper) || data == lower || matches_kitty(data, cp, ALT);
            }
            if modifier == CTRL {
                let csi = if left { "\x1b[1;5D" } else { "\x1b[1;5C" };
                return data == csi
                    || legacy_modifier_sequences(&key, CTRL).contains(&data)
                    || matches_kitty(data, cp, CTRL);
            }
            return match_navigation(data, &key, cp, modifier);
        }
        f if f.len() >= 2 && f.starts_with('f') && f[1..].parse::<i64>().is_ok_and(|n| (1..=12).contains(&n)) => {
            let n: i64 = f[1..].parse().unwrap_or(1);
            if modifier == 0 && legacy_sequences(f).contains(&data) {
                return true;
            }
            return matches_kitty(data, F1 - (n - 1), modifier);
        }
        _ => {}
    }
    let mut chars = key.chars();
    let (Some(c), None) = (chars.next(), chars.next()) else {
        return false;
    };
    let letter = c.is_ascii_lowercase();
    let digit = c.is_ascii_digit();
    if !(letter || digit || SYMBOL_KEYS.contains(c)) {
        return false;
    }
    let cp = c as i64;
    let raw = raw_ctrl_char(c);
    if modifier == CTRL + ALT
        && !k
        && let Some(r) = raw
        && data.strip_prefix('\x1b').is_some_and(|rest| rest.len() == 1 && rest.starts_with(r))
    {
        return true;
    }
    if modifier == ALT
        && !k
        && data.strip_prefix('\x1b').is_some_and(|rest| rest.len() == c.len_utf8() && rest.starts_with(c))
    {
        return true;
    }
    if modifier == CTRL {
        if let Some(r) = raw
            && data.len() == 1
            && data.starts_with(r)
        {
            return true;
        }
        return matches_kitty(data, cp, CTRL) || matches_printable_mok(data, cp, CTRL);
    }
    if modifier == SHIFT + CTRL {
        return matches_kitty(data, cp, SHIFT + CTRL) || matches_printable_mok(data, cp, SHIFT + CTRL);
    }
    if modifier == SHIFT {
        if letter && data.len() == 1 && data.starts_with(c.to_ascii_uppercase()) {
            return true;
        }
        return matches_kitty(data, cp, SHIFT) || matches_printable_mok(data, cp, SHIFT);
    }
    if modifier != 0 {
        return matches_kitty(data, cp, modifier) || matches_printable_mok(data, cp, modifier);
    }
    (data.len() == c.len_utf8() && data.starts_with(c))
        || matches_kitty(data, cp, 0)
        || matches_printable_mok(data, cp, 0)
}

fn format_with_modifiers(name: &str, modifier: u32) -> Option<String> {
    let m = modifier & !LOCK_MASK;
    if m & !(SHIFT | CTRL | ALT | SUPER) != 0 {
        return None;
    }
    let mut parts: Vec<&str> = Vec::new();
    for (bit, n) in [(SHIFT, "shift"), (CTRL, "ctrl"), (ALT, "alt"), (SUPER, "super")] {
        if m & bit != 0 {
            parts.push(n);
        }
    }
    parts.push(name);
    Some(parts.join("+"))
}

fn format_parsed(cp: i64, modifier: u32, base: Option<i64>) -> Option<String> {
    let identity = normalize_shifted_letter(normalize_functional(cp), modifier);
    let latin = (97..=122).contains(&identity);
    let digit = (48..=57).contains(&identity);
    let effective =
        if latin || digit || is_symbol(identity, SYMBOL_KEYS) { identity } else { base.unwrap_or(identity) };
    let name: String = match effective {
        CP_ESCAPE => "escape".into(),
        CP_TAB => "tab".into(),
        CP_ENTER | CP_KP_ENTER => "enter".into(),
        CP_SPACE => "space".into(),
        CP_BACKSPACE => "backspace".into(),
        DELETE => "delete".into(),
        INSERT => "insert".into(),
        HOME => "home".into(),
        END => "end".into(),
        PAGE_UP => "pageUp".into(),
        PAGE_DOWN => "pageDown".into(),
        F12..=F1 => format!("f{}", F1 - effective + 1),
        UP => "up".into(),
        DOWN => "down".into(),
        LEFT => "left".into(),
        RIGHT => "right".into(),
        48..=57 | 97..=122 => char::from_u32(effective as u32)?.to_string(),
        e if is_symbol(e, SYMBOL_KEYS) => char::from_u32(e as u32)?.to_string(),
        _ => return None,
    };
    format_with_modifiers(&name, modifier)
}

/// The key id of a raw input sequence (`"shift+enter"`, `"ctrl+c"`, `"a"`), if recognised.
pub fn parse_key(data: &str) -> Option<String> {
    if let Some(p) = parse_kitty(data) {
        let sym = logical_shifted_symbol(p.shifted, p.modifier, SYMBOL_KEYS);
        return format_parsed(sym.map_or(p.codepoint, |s| s.0), sym.map_or(p.modifier, |s| s.1), p.base);
    }
    if let Some((cp, m)) = parse_modify_other_keys(data) {
        let sym = logical_shifted_symbol(Some(cp), m, SHIFTED_SYMBOL_KEYS);
        return format_parsed(sym.map_or(cp, |s| s.0), sym.map_or(m, |s| s.1), None);
    }
    let k = kitty();
    if k && (data == "\x1b\r" || data == "\n") {
        return Some("shift+enter".into());
    }
    if let Some(id) = legacy_key_id(data) {
        return Some(id.into());
    }
    let fixed = match data {
        "\x1b" => Some("escape"),
        "\x1c" => Some("ctrl+\\"),
        "\x1d" => Some("ctrl+]"),
        "\x1f" => Some("ctrl+-"),
        "\x1b\x1b" => Some("ctrl+alt+["),
        "\x1b\x1c" => Some("ctrl+alt+\\"),
        "\x1b\x1d" => Some("ctrl+alt+]"),
        "\x1b\x1f" => Some("ctrl+alt+-"),
        "\t" => Some("tab"),
        "\r" | "\x1bOM" => Some("enter"),
        "\n" if !k => Some("enter"),
        "\0" => Some("ctrl+space"),
        " " => Some("space"),
        "\x7f" => Some("backspace"),
        "\x08" => Some(if is_windows_terminal() { "ctrl+backspace" } else { "backspace" }),
        "\x1b[Z" => Some("shift+tab"),
        "\x1b\r" if !k => Some("alt+enter"),
        "\x1b " if !k => Some("alt+space"),
        "\x1b\x7f" | "\x1b\x08" => Some("alt+backspace"),
        "\x1bB" if !k => Some("alt+left"),
        "\x1bF" if !k => Some("alt+right"),
        _ => None,
    };
    if let Some(f) = fixed {
        return Some(f.into());
    }
    let b = data.as_bytes();
    if !k && b.len() == 2 && b[0] == 0x1b {
        let code = b[1];
        if (1..=26).contains(&code) {
            return Some(format!("ctrl+alt+{}", (code + 96) as char));
        }
        let c = code as char;
        if c.is_ascii_lowercase() || c.is_ascii_digit() || SYMBOL_KEYS.contains(c) {
            return Some(format!("alt+{c}"));
        }
    }
    let fixed = match data {
        "\x1b[A" => Some("up"),
        "\x1b[B" => Some("down"),
        "\x1b[C" => Some("right"),
        "\x1b[D" => Some("left"),
        "\x1b[H" | "\x1bOH" => Some("home"),
        "\x1b[F" | "\x1bOF" => Some("end"),
        "\x1b[3~" => Some("delete"),
        "\x1b[5~" => Some("pageUp"),
        "\x1b[6~" => Some("pageDown"),
        _ => None,
    };
    if let Some(f) = fixed {
        return Some(f.into());
    }
    if b.len() == 1 {
        let code = b[0];
        if (1..=26).contains(&code) {
            return Some(format!("ctrl+{}", (code + 96) as char));
        }
        if (32..=126).contains(&code) {
            return Some(data.to_string());
        }
    }
    None
}

/// The Kitty event type of a key sequence: 1 press (also for non-Kitty input), 2 repeat, 3 release.
pub fn key_event_type(data: &str) -> u8 {
    parse_kitty(data).map_or(1, |k| k.event)
}

fn has_event_suffix(data: &str, event: char) -> bool {
    if data.contains("\x1b[200~") {
        return false;
    }
    ['u', '~', 'A', 'B', 'C', 'D', 'H', 'F', 'P', 'Q', 'S'].iter().any(|f| data.contains(&format!(":{event}{f}")))
}

/// Whether `data` is a Kitty key-release event.
pub fn is_key_release(data: &str) -> bool {
    has_event_suffix(data, '3')
}

/// Whether `data` is a Kitty key-repeat event.
pub fn is_key_repeat(data: &str) -> bool {
    has_event_suffix(data, '2')
}

/// The printable text of a Kitty CSI-u or modifyOtherKeys sequence (unmodified or shifted only).
pub fn decode_printable_key(data: &str) -> Option<String> {
    if let Some(p) = parse_csi_u(data) {
        let modifier = p.modifier;
        if modifier & !(SHIFT | LOCK_MASK) != 0 {
            return None;
        }
        let mut cp = p.codepoint;
        if modifier & SHIFT != 0
            && let Some(s) = p.shifted
        {
            cp = s;
        }
        cp = normalize_functional(cp);
        if cp < 32 || (57344..=63743).contains(&cp) {
            return None;
        }
        return u32::try_from(cp).ok().and_then(char::from_u32).map(String::from);
    }
    let (cp, m) = parse_modify_other_keys(data)?;
    if (m & !LOCK_MASK) & !SHIFT != 0 || cp < 32 {
        return None;
    }
    u32::try_from(cp).ok().and_then(char::from_u32).map(String::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_keys() {
        let cases = [
            ("\r", "enter"),
            ("\x1b[13;2u", "shift+enter"),
            ("\x1b[27;2;13~", "shift+enter"),
            ("\x03", "ctrl+c"),
            ("\x1b[99;5u", "ctrl+c"),
            ("\x1b[1089::99;5u", "ctrl+c"),
            ("\x1b[1;5C", "ctrl+right"),
            ("\x1b", "escape"),
            ("\x7f", "backspace"),
            ("\x1b\x7f", "alt+backspace"),
            ("\x1b[Z", "shift+tab"),
            ("\x1bb", "alt+left"),
        ];
        for (data, id) in cases {
            assert!(matches_key(data, id), "{data:?} should match {id}");
            assert_eq!(parse_key(data).as_deref(), Some(id), "parse_key({data:?})");
        }
        assert!(!matches_key("\r", "shift+enter"));
        assert!(!matches_key("a", "b"));
        assert!(matches_key("A", "shift+a"));
        assert_eq!(parse_key("\x1b[A").as_deref(), Some("up"));
        assert_eq!(parse_key("\x1b[5~").as_deref(), Some("pageUp"));
        assert!(matches_key("\x1b[5~", "pageUp"));
        assert!(is_key_release("\x1b[97;1:3u"));
        assert_eq!(decode_printable_key("\x1b[97;2:1u").as_deref(), Some("a"));
        assert_eq!(decode_printable_key("\x1b[97:65;2u").as_deref(), Some("A"));
    }
}
