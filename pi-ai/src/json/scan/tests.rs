use super::*;
use serde_json::Value;

/// Whether the scanner reads `text` as one whole value.
fn accepts(text: &str) -> bool {
    let mut s = Scanner::new(text);
    s.skip().and_then(|()| s.end()).is_ok()
}

fn string(text: &str) -> Scan<Cow<'_, str>> {
    let mut s = Scanner::new(text);
    let value = s.string()?;
    s.end()?;
    Ok(value)
}

#[test]
fn strings_are_borrowed_unless_escaped_and_unescape_as_serde_json_does() {
    assert!(matches!(string(r#""plain é""#), Ok(Cow::Borrowed("plain é"))));
    for text in [
        r#""a\nb""#,
        r#""\"q\" \\ \/ \b\f\n\r\t""#,
        r#""\u00e9\u0000x""#,
        r#""\ud83d\ude00 smile""#,
        r#""end\\""#,
        r#""\u2028""#,
    ] {
        let expected: String = serde_json::from_str(text).expect("valid");
        match string(text) {
            Ok(Cow::Owned(s)) => assert_eq!(s, expected, "{text}"),
            other => panic!("{text}: {other:?}"),
        }
    }
    for bad in [r#""\ud83d""#, r#""\ude00""#, r#""\ud83dx""#, r#""\x""#, r#""\u12""#, "\"a\u{1}\"", r#""open"#, r#""\"#]
    {
        assert_eq!(string(bad), Err(Reject), "{bad}");
    }
}

#[test]
fn integers_fit_an_i64_or_are_declined() {
    let int = |text: &str| {
        let mut s = Scanner::new(text);
        s.integer().and_then(|v| s.end().map(|()| v))
    };
    assert_eq!(int("0"), Ok(0));
    assert_eq!(int(" -0 "), Ok(0));
    assert_eq!(int("9223372036854775807"), Ok(i64::MAX));
    assert_eq!(int("-9223372036854775808"), Ok(i64::MIN));
    for bad in ["9223372036854775808", "01", "1.0", "1e2", "-", "", "x", "1E2"] {
        assert_eq!(int(bad), Err(Reject), "{bad}");
    }
}

#[test]
fn skip_reads_json_and_declines_the_rest() {
    for good in [
        "null",
        " true ",
        "false",
        "0",
        "-12.5",
        "123456789012345678",
        r#"{"a":[1,{"b":null},"c\"d"],"e":{}}"#,
        "[]",
        "[[],[[]]]",
        "\t{ \"k\" : [ 1 , 2 ] }\r\n",
    ] {
        assert!(accepts(good), "{good}");
        assert!(serde_json::from_str::<Value>(good).is_ok(), "{good}");
    }
    // Not JSON.
    for bad in [
        "",
        "nul",
        "tru",
        "[1,]",
        "{,}",
        r#"{"a" 1}"#,
        r#"{"a":1,}"#,
        "[1 2]",
        "01",
        "1.",
        ".5",
        "-",
        "+1",
        "{1:2}",
        "[",
        "]",
        "1 2",
        "'a'",
    ] {
        assert!(!accepts(bad), "{bad}");
        assert!(serde_json::from_str::<Value>(bad).is_err(), "{bad}");
    }
    // JSON, but left to serde_json: exponents, long numbers, deep nesting.
    for declined in ["1e5", "2E-3", "1234567890123456789", &"[".repeat(70)] {
        assert!(!accepts(declined), "{declined}");
    }
    let deep = format!("{}{}", "[".repeat(MAX_DEPTH as usize), "]".repeat(MAX_DEPTH as usize));
    assert!(accepts(&deep));
}

#[test]
fn duplicates_are_declined_by_once() {
    let mut seen = false;
    assert_eq!(once(&mut seen), Ok(()));
    assert_eq!(once(&mut seen), Err(Reject));
}

/// A small deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Thousands of texts near valid JSON (valid chunks with bytes deleted, duplicated or replaced by
/// JSON's own punctuation): whatever the scanner reads whole, serde_json reads too, and strings it
/// reads are the ones serde_json reads.
#[test]
fn whatever_the_scanner_accepts_serde_json_accepts() {
    let seeds = [
        r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hi \"x\"\n"},"finish_reason":null}]}"#,
        r#"{"a":[true,false,null,-1.25,{"b":"\u00e9\ud83d\ude00"}],"c":{}}"#,
        r#"[{"k":"v"},[1,2,[3]],"s\\t"]"#,
        r#""a\"b\\n\u00e9\ud83d\ude00 c\/""#,
    ];
    let alphabet = b"{}[]\":,\\ntfu0-.e1 a";
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (mut accepted, mut strings) = (0, 0);
    for round in 0..20_000 {
        let mut bytes = seeds[round % seeds.len()].as_bytes().to_vec();
        for _ in 0..=rng.below(3) {
            let at = rng.below(bytes.len());
            match rng.below(3) {
                0 => {
                    bytes.remove(at);
                }
                1 => bytes.insert(at, bytes[at]),
                _ => bytes[at] = alphabet[rng.below(alphabet.len())],
            }
            if bytes.is_empty() {
                break;
            }
        }
        let Ok(text) = std::str::from_utf8(&bytes) else { continue };
        if accepts(text) {
            accepted += 1;
            assert!(serde_json::from_str::<Value>(text).is_ok(), "the scanner accepted {text}");
        }
        let mut s = Scanner::new(text);
        if let Ok(read) = s.string() {
            let expected: String = serde_json::from_str(&text[..s.pos]).expect("serde_json reads the same string");
            assert_eq!(read, expected);
            strings += 1;
        }
    }
    // The mutations leave many texts valid: the check above ran on them.
    assert!(accepted > 1_000, "only {accepted} texts accepted");
    assert!(strings > 1_000, "only {strings} strings read");
}
