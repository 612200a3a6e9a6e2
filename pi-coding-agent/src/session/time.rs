//! ISO-8601 timestamps as JavaScript's `Date.prototype.toISOString()` writes them.
//!
//! Session entries carry `timestamp` as an ISO string (`2026-11-30T09:27:33.046Z`); messages carry
//! Unix milliseconds. These helpers convert between the two without a date library.

pub use pi_ai::js::now_ms;

/// The current time as `toISOString()` writes it.
pub fn iso_now() -> String {
    format_iso(i64::try_from(now_ms()).unwrap_or(i64::MAX))
}

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Formats Unix milliseconds as `YYYY-MM-DDTHH:MM:SS.sssZ`.
///
/// ```
/// assert_eq!(pi_coding_agent::session::format_iso(1_764_494_853_046), "2025-11-30T09:27:33.046Z");
/// ```
pub fn format_iso(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    let rem = ms.rem_euclid(86_400_000);
    let (y, m, d) = civil_from_days(days);
    let (h, mi, s, milli) = (rem / 3_600_000, rem / 60_000 % 60, rem / 1000 % 60, rem % 1000);
    format!("{y:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{milli:03}Z")
}

/// Parses an ISO timestamp (`YYYY-MM-DDTHH:MM:SS[.fff][Z|±HH:MM]`, or a date alone) into Unix
/// milliseconds, as `new Date(s).getTime()` does for these shapes; `None` when it is not one.
///
/// ```
/// use pi_coding_agent::session::parse_iso;
/// assert_eq!(parse_iso("2025-11-30T09:27:33.046Z"), Some(1_764_494_853_046));
/// assert_eq!(parse_iso("nonsense"), None);
/// ```
pub fn parse_iso(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let part = s.get(r)?;
        if part.is_empty() || !part.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        part.parse().ok()
    };
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) {
        return None;
    }
    let mut ms = days_from_civil(y, mo, d) * 86_400_000;
    if b.len() == 10 {
        return Some(ms);
    }
    if b.len() < 16 || b[10] != b'T' || b[13] != b':' {
        return None;
    }
    let (h, mi) = (num(11..13)?, num(14..16)?);
    let mut i = 16;
    let mut sec = 0;
    let mut frac = 0;
    if b.get(i) == Some(&b':') {
        sec = num(i + 1..i + 3)?;
        i += 3;
        if b.get(i) == Some(&b'.') {
            let start = i + 1;
            let mut end = start;
            while end < b.len() && b[end].is_ascii_digit() {
                end += 1;
            }
            if end == start {
                return None;
            }
            let digits = &s[start..end.min(start + 3)];
            frac = digits.parse::<i64>().ok()? * 10_i64.pow(3 - digits.len() as u32);
            i = end;
        }
    }
    if h > 24 || mi > 59 || sec > 59 {
        return None;
    }
    ms += h * 3_600_000 + mi * 60_000 + sec * 1000 + frac;
    match b.get(i) {
        Some(b'Z') if i + 1 == b.len() => Some(ms),
        Some(&sign @ (b'+' | b'-')) if b.len() == i + 6 && b[i + 3] == b':' => {
            let off = num(i + 1..i + 3)? * 60 + num(i + 4..i + 6)?;
            Some(if sign == b'+' { ms - off * 60_000 } else { ms + off * 60_000 })
        }
        // Without a zone JS reads local time; sessions always carry `Z`, so UTC is used here.
        None => Some(ms),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        for ms in [0, 1, 999, 86_399_999, 951_782_400_000, 1_764_494_853_046, 4_102_444_800_000] {
            assert_eq!(parse_iso(&format_iso(ms)), Some(ms), "{ms}");
        }
        assert_eq!(format_iso(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(parse_iso("2024-02-29T12:00:00+02:00"), parse_iso("2024-02-29T10:00:00.000Z"));
        assert_eq!(parse_iso("2024-13-01T00:00:00Z"), None);
    }
}
