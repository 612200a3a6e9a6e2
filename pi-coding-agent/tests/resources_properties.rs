//! Properties of frontmatter parsing, argument parsing and substitution on arbitrary input:
//! nothing panics, and the simple cases behave as pi's functions do.

use pi_coding_agent::sdk::frontmatter::parse_frontmatter;
use pi_coding_agent::sdk::{expand_prompt_template, parse_command_args, parse_skill_block, substitute_args};
use proptest::prelude::*;

proptest! {
    #[test]
    fn arbitrary_text_never_panics(text in "(?s).{0,200}", args in proptest::collection::vec(".{0,8}", 0..4)) {
        let _ = parse_frontmatter(&text);
        let _ = parse_frontmatter(&format!("---\n{text}\n---\nbody"));
        let _ = parse_command_args(&text);
        let _ = substitute_args(&text, &args);
        let _ = parse_skill_block(&text);
        let _ = expand_prompt_template(&format!("/{text}"), &[]);
    }

    #[test]
    fn text_without_placeholders_is_unchanged(text in "[^$]{0,100}", args in proptest::collection::vec("[a-z]{1,5}", 0..4)) {
        prop_assert_eq!(substitute_args(&text, &args), text);
    }

    #[test]
    fn plain_words_split_on_whitespace(words in proptest::collection::vec("[a-zA-Z0-9._-]{1,8}", 0..6), sep in "[ \t\n]{1,3}") {
        let input = words.join(&sep);
        prop_assert_eq!(parse_command_args(&input), words.clone());
        let quoted: Vec<String> = words.iter().map(|w| format!("\"{w} x\"")).collect();
        let expected: Vec<String> = words.iter().map(|w| format!("{w} x")).collect();
        prop_assert_eq!(parse_command_args(&quoted.join(" ")), expected);
    }

    #[test]
    fn positional_placeholders_pick_their_argument(args in proptest::collection::vec("[a-z]{1,5}", 1..6), n in 1usize..8) {
        let want = args.get(n - 1).cloned().unwrap_or_default();
        prop_assert_eq!(substitute_args(&format!("${n}"), &args), want);
        prop_assert_eq!(substitute_args("$@", &args), args.join(" "));
        let tail = args.iter().skip(n - 1).cloned().collect::<Vec<_>>().join(" ");
        prop_assert_eq!(substitute_args(&format!("${{@:{n}}}"), &args), tail);
    }
}
