//! The `format` checks pi validates tool arguments with (every format of JSON Schema 2020-12, plus `url` and
//! `json-pointer-uri-fragment`). Written from the specifications (RFC 3339, 5321, 3986, 6570, 6901, 4122, ISO 8601
//! durations) to agree with pi-schema's checks; unknown formats are not checked.

/// Whether `s` has the format `name`; `None` for a format pi does not check.
pub(crate) fn check(name: &str, s: &str) -> Option<bool> {
    Some(match name {
        "date" => is_date(s),
        "date-time" => is_date_time(s),
        "time" => is_time(s),
        "duration" => is_duration(s),
        "email" => is_email(s),
        "idn-email" => is_idn_email(s),
        "hostname" => is_hostname(s, false),
        "idn-hostname" => is_hostname(s, true),
        "ipv4" => is_ipv4(s),
        "ipv6" => is_ipv6(s),
        "uri" => is_uri(s, false),
        "uri-reference" => is_uri_reference(s, false),
        "iri" => is_iri(s),
        "iri-reference" => is_iri_reference(s),
        "url" => is_url(s),
        "uri-template" => is_uri_template(s),
        "json-pointer" => is_json_pointer(s),
        "json-pointer-uri-fragment" => is_json_pointer_fragment(s),
        "relative-json-pointer" => is_relative_json_pointer(s),
        "regex" => regress::Regex::with_flags(s, "u").is_ok(),
        "uuid" => is_uuid(s),
        _ => return None,
    })
}

/// `n` ASCII digits as a number.
fn digits(s: &str) -> Option<u32> {
    (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())).then(|| s.parse().ok()).flatten()
}

fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let (Some(year), Some(month), Some(day)) = (digits(&s[..4]), digits(&s[5..7]), digits(&s[8..])) else {
        return false;
    };
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

fn is_time(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 9 || b[2] != b':' || b[5] != b':' {
        return false;
    }
    let (Some(hour), Some(minute), Some(second)) = (digits(&s[..2]), digits(&s[3..5]), digits(&s[6..8])) else {
        return false;
    };
    let mut rest = &s[8..];
    if let Some(frac) = rest.strip_prefix('.') {
        let n = frac.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return false;
        }
        rest = &frac[n..];
    }
    let offset_minutes: i64 = match rest {
        "Z" | "z" => 0,
        _ => {
            let ob = rest.as_bytes();
            if ob.len() != 6 || !matches!(ob[0], b'+' | b'-') || ob[3] != b':' {
                return false;
            }
            let (Some(h), Some(m)) = (digits(&rest[1..3]), digits(&rest[4..])) else { return false };
            if h > 23 || m > 59 {
                return false;
            }
            let sign = if ob[0] == b'-' { -1 } else { 1 };
            sign * i64::from(h * 60 + m)
        }
    };
    if hour > 23 || minute > 59 || second > 60 {
        return false;
    }
    if second < 60 {
        return true;
    }
    // A leap second is 23:59:60 in UTC.
    (i64::from(hour * 60 + minute) - offset_minutes).rem_euclid(1440) == 1439
}

fn is_date_time(s: &str) -> bool {
    let mut parts = s.split(['T', 't']);
    match (parts.next(), parts.next(), parts.next()) {
        (Some(date), Some(time), None) => is_date(date) && is_time(time),
        _ => false,
    }
}

/// ISO 8601 durations as RFC 3339 appendix A gives them: `P` then weeks, or date units in order with an optional
/// time part, each unit run without gaps (`P1Y2M`, `PT1H30M`, `P2W`).
fn is_duration(s: &str) -> bool {
    let Some(body) = s.strip_prefix('P') else { return false };
    if let Some(w) = body.strip_suffix('W') {
        return digits(w).is_some() || (!w.is_empty() && w.bytes().all(|b| b.is_ascii_digit()));
    }
    let (date, time) = match body.split_once('T') {
        Some((d, t)) => (d, Some(t)),
        None => (body, None),
    };
    let run = |text: &str, units: &[u8]| -> Option<bool> {
        // Units must be consecutive: once one appears, each later one follows the previous.
        let mut seen: Vec<usize> = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            let n = rest.bytes().take_while(u8::is_ascii_digit).count();
            if n == 0 || n == rest.len() {
                return None;
            }
            let unit = rest.as_bytes()[n];
            let index = units.iter().position(|u| *u == unit)?;
            if seen.last().is_some_and(|last| index != last + 1) {
                return None;
            }
            seen.push(index);
            rest = &rest[n + 1..];
        }
        Some(!seen.is_empty())
    };
    let date_ok = run(date, b"YMD");
    match time {
        None => date_ok == Some(true),
        Some(t) => date_ok.is_some() && run(t, b"HMS") == Some(true),
    }
}

fn is_atext(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+/=?^_`{|}~-".contains(c)
}

fn is_email(s: &str) -> bool {
    let Some(at) = s.rfind('@') else { return false };
    let (local, domain) = (&s[..at], &s[at + 1..]);
    let local_ok = if local.len() >= 2 && local.starts_with('"') && local.ends_with('"') {
        let inner = &local[1..local.len() - 1];
        let mut chars = inner.chars();
        let mut ok = true;
        while let Some(c) = chars.next() {
            match c {
                '\\' => ok &= chars.next().is_some_and(|e| (' '..='~').contains(&e)),
                '"' => ok = false,
                _ => {}
            }
        }
        ok
    } else {
        !local.is_empty() && local.split('.').all(|part| !part.is_empty() && part.chars().all(is_atext))
    };
    if !local_ok {
        return false;
    }
    if let Some(literal) = domain.strip_prefix('[').and_then(|d| d.strip_suffix(']')) {
        return match literal.get(..5) {
            Some(p) if p.eq_ignore_ascii_case("IPv6:") => {
                let rest = &literal[5..];
                !rest.is_empty() && rest.chars().all(|c| c.is_ascii_hexdigit() || c == ':')
            }
            _ => is_ipv4(literal),
        };
    }
    !domain.is_empty()
        && domain.split('.').all(|label| {
            let b = label.as_bytes();
            !b.is_empty()
                && b.len() <= 63
                && b[0].is_ascii_alphanumeric()
                && b[b.len() - 1].is_ascii_alphanumeric()
                && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
        })
}

fn is_idn_email(s: &str) -> bool {
    let Some(at) = s.rfind('@') else { return false };
    let (local, domain) = (&s[..at], &s[at + 1..]);
    let local_ok = (local.len() >= 2 && local.starts_with('"') && local.ends_with('"'))
        || (!local.is_empty()
            && local.split('.').all(|p| !p.is_empty() && p.chars().all(|c| is_atext(c) || !c.is_ascii())));
    local_ok
        && domain.split('.').all(|label| {
            let n = label.chars().count();
            (1..=63).contains(&n)
                && label.chars().next().is_some_and(char::is_alphanumeric)
                && !label.ends_with('-')
                && label.chars().all(|c| c.is_alphanumeric() || c == '-')
        })
}

fn is_hostname(s: &str, idn: bool) -> bool {
    if idn {
        return is_idn_hostname(s);
    }
    if s.is_empty() || s.len() > 253 || s.ends_with('.') {
        return false;
    }
    s.split('.').all(|label| (1..=63).contains(&label.len()) && (is_puny_label(label) || is_ascii_label(label)))
}

/// An LDH label: letters, digits and hyphens, no hyphen first or last, and no `--` in the 3rd and 4th places.
fn is_ascii_label(label: &str) -> bool {
    let b = label.as_bytes();
    !b.is_empty()
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
        && !(b.len() >= 4 && &b[2..4] == b"--")
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
}

/// An A-label: `xn--` and Punycode that decodes to a label with a non-ASCII character.
fn is_puny_label(label: &str) -> bool {
    let Some(body) = label.get(..4).filter(|p| p.eq_ignore_ascii_case("xn--")).map(|_| label[4..].to_lowercase())
    else {
        return false;
    };
    if body.rfind('-') == Some(0) {
        return false;
    }
    match punycode_decode(&body) {
        Some(decoded) => decoded.iter().any(|c| !c.is_ascii()) && is_unicode_label(&decoded),
        None => false,
    }
}

/// RFC 3492 decoding; `None` for malformed input.
fn punycode_decode(input: &str) -> Option<Vec<char>> {
    let (basic, extended) = match input.rfind('-') {
        Some(i) => (&input[..i], &input[i + 1..]),
        None => ("", input),
    };
    if !basic.is_ascii() {
        return None;
    }
    let mut output: Vec<char> = basic.chars().collect();
    let (mut n, mut i, mut bias) = (128u32, 0u32, 72u32);
    let mut digits = extended.bytes();
    let mut pending = digits.len();
    while pending > 0 {
        let old_i = i;
        let mut w = 1u32;
        let mut k = 36u32;
        loop {
            let c = digits.next()?;
            pending -= 1;
            let digit = u32::from(match c {
                b'a'..=b'z' => c - b'a',
                b'A'..=b'Z' => c - b'A',
                b'0'..=b'9' => c - b'0' + 26,
                _ => return None,
            });
            i = i.checked_add(digit.checked_mul(w)?)?;
            let t = if k <= bias {
                1
            } else if k >= bias + 26 {
                26
            } else {
                k - bias
            };
            if digit < t {
                break;
            }
            w = w.checked_mul(36 - t)?;
            k += 36;
        }
        let len = u32::try_from(output.len()).ok()? + 1;
        bias = adapt(i - old_i, len, old_i == 0);
        n = n.checked_add(i / len)?;
        i %= len;
        output.insert(i as usize, char::from_u32(n)?);
        i += 1;
    }
    Some(output)
}

fn adapt(delta: u32, points: u32, first: bool) -> u32 {
    let mut delta = if first { delta / 700 } else { delta / 2 };
    delta += delta / points;
    let mut k = 0;
    while delta > 455 {
        delta /= 35;
        k += 36;
    }
    k + (36 * delta) / (delta + 38)
}

/// A combining mark (the common blocks).
fn is_mark(c: char) -> bool {
    matches!(c, '\u{300}'..='\u{36f}' | '\u{1ab0}'..='\u{1aff}' | '\u{1dc0}'..='\u{1dff}' | '\u{20d0}'..='\u{20ff}' | '\u{fe20}'..='\u{fe2f}')
}

/// A U-label, approximately: letters, digits, marks and hyphens with the hyphen rules.
fn is_unicode_label(chars: &[char]) -> bool {
    let (Some(first), Some(last)) = (chars.first(), chars.last()) else { return false };
    *first != '-'
        && *last != '-'
        && !(chars.len() >= 4 && chars[2] == '-' && chars[3] == '-')
        && !is_mark(*first)
        && chars.iter().all(|c| *c == '-' || is_mark(*c) || c.is_alphanumeric())
}

fn is_idn_hostname(s: &str) -> bool {
    if s.is_empty() || s.contains(' ') {
        return false;
    }
    let normalized: String = s
        .chars()
        .filter_map(|c| match c {
            '\u{ff01}'..='\u{ff5e}' => char::from_u32(c as u32 - 0xfee0),
            '\u{ad}' | '\u{34f}' | '\u{180b}'..='\u{180d}' | '\u{200b}' | '\u{fe00}'..='\u{fe0f}' => None,
            // U+FF0E (fullwidth full stop) is mapped to '.' by the fullwidth rule above.
            '\u{3002}' | '\u{ff61}' => Some('.'),
            c => Some(c),
        })
        .collect();
    if js_len(&normalized) > 253 {
        return false;
    }
    normalized.split('.').all(|label| {
        let chars: Vec<char> = label.chars().collect();
        (1..=63).contains(&js_len(label)) && (is_puny_label(label) || is_unicode_label(&chars))
    })
}

use crate::js::js_len;

fn is_ipv4(s: &str) -> bool {
    let parts: Vec<&str> = s.split('.').collect();
    parts.len() == 4
        && parts.iter().all(|p| {
            (1..=3).contains(&p.len()) && (p.len() == 1 || !p.starts_with('0')) && digits(p).is_some_and(|n| n <= 255)
        })
}

fn is_ipv6(s: &str) -> bool {
    s.parse::<std::net::Ipv6Addr>().is_ok()
}

fn is_unreserved_or_sub(c: char, extra: &str, iri: bool) -> bool {
    c.is_ascii_alphanumeric()
        || "-._~!$&'()*+,;=".contains(c)
        || extra.contains(c)
        || (iri && !c.is_ascii() && !c.is_whitespace())
}

/// Whether every `%` starts an escape of two hex digits and every other character is allowed.
fn chars_ok(s: &str, extra: &str, iri: bool) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    for (j, c) in s.char_indices() {
        if j < i {
            continue;
        }
        if c == '%' {
            if !(b.len() > j + 2 && b[j + 1].is_ascii_hexdigit() && b[j + 2].is_ascii_hexdigit()) {
                return false;
            }
            i = j + 3;
        } else if !is_unreserved_or_sub(c, extra, iri) {
            return false;
        }
    }
    true
}

/// The hierarchical part, query and fragment of a URI or relative reference (after the scheme).
fn rest_ok(rest: &str, iri: bool) -> bool {
    let (before_fragment, fragment) = match rest.split_once('#') {
        Some((a, f)) => (a, Some(f)),
        None => (rest, None),
    };
    let (hier, query) = match before_fragment.split_once('?') {
        Some((h, q)) => (h, Some(q)),
        None => (before_fragment, None),
    };
    if fragment.is_some_and(|f| !chars_ok(f, ":@/?", iri)) || query.is_some_and(|q| !chars_ok(q, ":@/?", iri)) {
        return false;
    }
    if let Some(after) = hier.strip_prefix("//") {
        let end = after.find('/').unwrap_or(after.len());
        let (authority, path) = (&after[..end], &after[end..]);
        let host_port = match authority.rsplit_once('@') {
            Some((user, hp)) => {
                if !chars_ok(user, ":", iri) {
                    return false;
                }
                hp
            }
            None => authority,
        };
        let host_ok = if let Some(inner) = host_port.strip_prefix('[') {
            match inner.split_once(']') {
                Some((ip, port)) => {
                    (is_ipv6(ip) || ip.starts_with(['v', 'V']))
                        && (port.is_empty()
                            || port.strip_prefix(':').is_some_and(|p| p.bytes().all(|c| c.is_ascii_digit())))
                }
                None => false,
            }
        } else {
            let (host, port) = match host_port.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (host_port, None),
            };
            port.is_none_or(|p| p.bytes().all(|c| c.is_ascii_digit())) && chars_ok(host, "", iri)
        };
        return host_ok && chars_ok(path, ":@/", iri);
    }
    chars_ok(hier, ":@/", iri)
}

/// Whether a WHATWG URL parser accepts `s` (JS's `URL.canParse`), for the checks that matter: a scheme, and
/// for the special schemes a host that parses (with an IPv4 or IPv6 literal valid) and a port below 65536.
fn is_url(s: &str) -> bool {
    let s: String = s.trim_matches(|c: char| c <= ' ').chars().filter(|c| !matches!(c, '\t' | '\n' | '\r')).collect();
    let Some(colon) = scheme_len(&s) else { return false };
    let scheme = s[..colon].to_ascii_lowercase();
    let rest = &s[colon + 1..];
    let special = matches!(scheme.as_str(), "http" | "https" | "ws" | "wss" | "ftp");
    if scheme == "file" {
        return true;
    }
    let after = if special {
        rest.trim_start_matches(['/', '\\'])
    } else if let Some(a) = rest.strip_prefix("//") {
        a
    } else {
        return true;
    };
    let end = after.find(|c| c == '/' || c == '?' || c == '#' || (special && c == '\\')).unwrap_or(after.len());
    let authority = &after[..end];
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, hp)| hp);
    let (host, port) = if let Some(inner) = host_port.strip_prefix('[') {
        let Some((ip, tail)) = inner.split_once(']') else { return false };
        if !is_ipv6(ip) {
            return false;
        }
        ("[]", tail.strip_prefix(':'))
    } else {
        match host_port.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (host_port, None),
        }
    };
    if port.is_some_and(|p| !valid_port(p)) {
        return false;
    }
    if host.is_empty() {
        return !special && !authority.contains('@') && port.is_none_or(str::is_empty);
    }
    if host == "[]" {
        return true;
    }
    let forbidden = |c: char| c <= ' ' || "#/:<>?@[\\]^|".contains(c) || (special && c == '%');
    if host.chars().any(forbidden) {
        return false;
    }
    if special {
        // A host whose last label is numeric is an IPv4 address.
        let labels: Vec<&str> = host.trim_end_matches('.').split('.').collect();
        let numeric = |l: &str| !l.is_empty() && l.bytes().all(|c| c.is_ascii_digit());
        if labels.last().is_some_and(|l| numeric(l)) {
            return labels.len() <= 4 && labels.iter().all(|l| numeric(l) && l.parse::<u64>().is_ok_and(|n| n <= 255));
        }
    }
    true
}

/// An empty port, or digits below 65536.
fn valid_port(p: &str) -> bool {
    p.is_empty() || (p.bytes().all(|c| c.is_ascii_digit()) && p.parse::<u32>().is_ok_and(|n| n < 65536))
}

/// An IRI: no spaces, controls or `<>^`{|}\`, valid percent escapes, and a URL parser accepts it.
fn is_iri(s: &str) -> bool {
    if s.chars().any(|c| c <= ' ' || "<>^`{|}\\".contains(c)) || !percent_escapes_ok(s) {
        return false;
    }
    is_url(s) || (s.contains("[v") || s.contains("[V")) && is_uri(s, true)
}

/// An IRI reference: no spaces, controls or backslashes, valid percent escapes, no `scheme//` without a colon,
/// and a URL parser accepts it against a base.
fn is_iri_reference(s: &str) -> bool {
    if s.chars().any(|c| c <= ' ' || c == '\u{7f}' || c == '\\') || !percent_escapes_ok(s) {
        return false;
    }
    let scheme_like = s.find("//").is_some_and(|i| {
        let head = &s[..i];
        let mut chars = head.chars();
        chars.next().is_some_and(|c| c.is_ascii_alphabetic())
            && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    });
    if scheme_like {
        return false;
    }
    match scheme_len(s) {
        Some(_) => is_url(s),
        None if s.starts_with("//") => is_url(&format!("http:{s}")),
        None => true,
    }
}

fn percent_escapes_ok(s: &str) -> bool {
    let b = s.as_bytes();
    b.iter()
        .enumerate()
        .all(|(i, c)| *c != b'%' || (b.len() > i + 2 && b[i + 1].is_ascii_hexdigit() && b[i + 2].is_ascii_hexdigit()))
}

fn scheme_len(s: &str) -> Option<usize> {
    let colon = s.find(':')?;
    let scheme = &s[..colon];
    let mut chars = scheme.chars();
    (chars.next()?.is_ascii_alphabetic() && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)))
        .then_some(colon)
}

fn is_uri(s: &str, iri: bool) -> bool {
    match scheme_len(s) {
        Some(colon) => rest_ok(&s[colon + 1..], iri),
        None => false,
    }
}

fn is_uri_reference(s: &str, iri: bool) -> bool {
    if s.contains('\\') {
        return false;
    }
    match scheme_len(s) {
        Some(colon) if !s[..colon].contains('/') => rest_ok(&s[colon + 1..], iri),
        _ => {
            // A relative reference's first segment has no colon.
            let first = s.split(['/', '?', '#']).next().unwrap_or("");
            !first.contains(':') && rest_ok(s, iri)
        }
    }
}

fn is_uri_template(s: &str) -> bool {
    let mut rest = s;
    while !rest.is_empty() {
        if let Some(expr) = rest.strip_prefix('{') {
            let Some(end) = expr.find('}') else { return false };
            let body = expr[..end].strip_prefix(|c| "+#./;?&=,!@|".contains(c)).unwrap_or(&expr[..end]);
            let vars_ok = body.split(',').all(|var| {
                let name = var.strip_suffix('*').unwrap_or(var);
                let name = match name.split_once(':') {
                    Some((n, len)) => {
                        let ok = (1..=4).contains(&len.len()) && !len.starts_with('0') && digits(len).is_some();
                        if !ok {
                            return false;
                        }
                        n
                    }
                    None => name,
                };
                !name.is_empty() && name.split('.').all(|part| !part.is_empty() && chars_ok_template_name(part))
            });
            if !vars_ok {
                return false;
            }
            rest = &expr[end + 1..];
        } else {
            let c = rest.chars().next().unwrap_or(' ');
            if c == '%' {
                let b = rest.as_bytes();
                if !(b.len() > 2 && b[1].is_ascii_hexdigit() && b[2].is_ascii_hexdigit()) {
                    return false;
                }
                rest = &rest[3..];
                continue;
            }
            if (c as u32) <= 0x20 || "\"<>\\^`{|}\u{7f}".contains(c) {
                return false;
            }
            rest = &rest[c.len_utf8()..];
        }
    }
    true
}

fn chars_ok_template_name(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            if !(b.len() > i + 2 && b[i + 1].is_ascii_hexdigit() && b[i + 2].is_ascii_hexdigit()) {
                return false;
            }
            i += 3;
        } else if b[i].is_ascii_alphanumeric() || b[i] == b'_' {
            i += 1;
        } else {
            return false;
        }
    }
    true
}

fn pointer_tokens_ok(s: &str) -> bool {
    let b = s.as_bytes();
    b.iter().enumerate().all(|(i, c)| *c != b'~' || matches!(b.get(i + 1), Some(b'0' | b'1')))
}

fn is_json_pointer(s: &str) -> bool {
    s.is_empty() || (s.starts_with('/') && pointer_tokens_ok(s))
}

fn is_json_pointer_fragment(s: &str) -> bool {
    let Some(p) = s.strip_prefix('#') else { return false };
    is_json_pointer(p) && chars_ok(p, ":@/", false)
}

fn is_relative_json_pointer(s: &str) -> bool {
    let n = s.bytes().take_while(u8::is_ascii_digit).count();
    if n == 0 || (n > 1 && s.starts_with('0')) {
        return false;
    }
    let rest = &s[n..];
    rest == "#" || is_json_pointer(rest)
}

fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter()
            .enumerate()
            .all(|(i, c)| if matches!(i, 8 | 13 | 18 | 23) { *c == b'-' } else { c.is_ascii_hexdigit() })
}

#[cfg(test)]
mod tests {
    use super::check;

    #[test]
    fn formats() {
        assert_eq!(check("date", "2024-02-29"), Some(true));
        assert_eq!(check("date", "2023-02-29"), Some(false));
        assert_eq!(check("date-time", "2024-01-02T03:04:05.5+01:00"), Some(true));
        assert_eq!(check("time", "23:59:60Z"), Some(true));
        assert_eq!(check("time", "12:00:00"), Some(false));
        assert_eq!(check("duration", "P1Y2M3DT4H5M6S"), Some(true));
        assert_eq!(check("duration", "P1D2M"), Some(false));
        assert_eq!(check("duration", "PT"), Some(false));
        assert_eq!(check("email", "a.b@example.com"), Some(true));
        assert_eq!(check("email", "a..b@example.com"), Some(false));
        assert_eq!(check("uri", "https://example.com/x?y=1#z"), Some(true));
        assert_eq!(check("uri", "//relative"), Some(false));
        assert_eq!(check("uri-reference", "//relative"), Some(true));
        assert_eq!(check("json-pointer", "/a~1b"), Some(true));
        assert_eq!(check("json-pointer", "/a~2"), Some(false));
        assert_eq!(check("relative-json-pointer", "1/a"), Some(true));
        assert_eq!(check("uri-template", "http://x/{a,b*}{?q:3}"), Some(true));
        assert_eq!(check("ipv4", "01.1.1.1"), Some(false));
        assert_eq!(check("color", "red"), None);
    }
}
