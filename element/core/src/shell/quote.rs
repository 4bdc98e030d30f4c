//! How GNU coreutils quote file names and values in messages (gnulib `quotearg`), for
//! the styles the shell's commands use, in a UTF-8 locale:
//! - [`quotef`]: `cat`, `wc` (shell-escape style, quoting only when needed; `:` also
//!   forces quotes),
//! - [`quoteaf`]: `head`, `ls` (shell-escape style, always quoted),
//! - [`quote`]: `head`'s invalid numbers (locale style, `‘…’`).

use super::unicode::is_print;

/// Shell-escape quoting, only when needed (`quotef`: also quotes a `:`).
pub(super) fn quotef(arg: &str) -> String {
    shell_quote(arg, true).unwrap_or_else(|| force_quoted(arg))
}

/// Shell-escape quoting, always quoted (`quoteaf`).
pub(super) fn quoteaf(arg: &str) -> String {
    force_quoted(arg)
}

fn force_quoted(arg: &str) -> String {
    // Quoting with outer quotes never needs to restart.
    shell_quote(arg, false).unwrap_or_default()
}

/// One pass of gnulib's shell quoting. With `elide` (quote only if needed), returns `None`
/// as soon as the argument turns out to need quotes.
fn shell_quote(arg: &str, elide: bool) -> Option<String> {
    let mut out = String::with_capacity(arg.len() + 2);
    if !elide {
        out.push('\'');
    }
    let mut pending_end = false; // inside a $'...' part
    let mut single_quote = false;
    let mut all_compat = true; // every char also fine inside C double quotes
    let single_char = arg.chars().count() == 1;

    for (i, ch) in arg.char_indices() {
        let mut compat = false;
        // What to store: plain text, or escape sequences inside $'...'.
        enum Store {
            Plain,
            Escape(&'static str),
            Octal,
        }
        let store = match ch {
            '?' | '\\' => {
                if elide {
                    return None;
                }
                Store::Plain
            }
            '\x07' => Store::Escape("a"),
            '\x08' => Store::Escape("b"),
            '\x0C' => Store::Escape("f"),
            '\x0B' => Store::Escape("v"),
            '\n' => Store::Escape("n"),
            '\r' => Store::Escape("r"),
            '\t' => Store::Escape("t"),
            '{' | '}' if !single_char => Store::Plain,
            '#' | '~' if i != 0 => Store::Plain,
            '{' | '}' | '#' | '~' | ' ' => {
                compat = true;
                if elide {
                    return None;
                }
                Store::Plain
            }
            '!' | '"' | '$' | '&' | '(' | ')' | '*' | ';' | '<' | '=' | '>' | '[' | '^' | '`'
            | '|' => {
                if elide {
                    return None;
                }
                Store::Plain
            }
            '\'' => {
                single_quote = true;
                compat = true;
                if elide {
                    return None;
                }
                out.push_str("'\\'");
                pending_end = false;
                Store::Plain
            }
            '%'
            | '+'
            | ','
            | '-'
            | '.'
            | '/'
            | '0'..='9'
            | ':'
            | 'A'..='Z'
            | ']'
            | '_'
            | 'a'..='z' => {
                compat = true;
                if ch == ':' && elide {
                    // quotef's extra character
                    return None;
                }
                Store::Plain
            }
            _ => {
                let printable = if ch.is_ascii() {
                    (' '..='~').contains(&ch)
                } else {
                    is_print(u32::from(ch))
                };
                compat = printable;
                if printable {
                    Store::Plain
                } else {
                    Store::Octal
                }
            }
        };
        match store {
            Store::Plain => {
                if pending_end {
                    out.push_str("''");
                    pending_end = false;
                }
                out.push(ch);
            }
            Store::Escape(e) => {
                if elide {
                    return None;
                }
                if !pending_end {
                    out.push_str("'$'");
                    pending_end = true;
                }
                out.push('\\');
                out.push_str(e);
            }
            Store::Octal => {
                if elide {
                    return None;
                }
                let mut buf = [0u8; 4];
                for &b in ch.encode_utf8(&mut buf).as_bytes() {
                    if !pending_end {
                        out.push_str("'$'");
                        pending_end = true;
                    }
                    out.push('\\');
                    out.push(char::from(b'0' + (b >> 6)));
                    out.push(char::from(b'0' + ((b >> 3) & 7)));
                    out.push(char::from(b'0' + (b & 7)));
                }
            }
        }
        if !compat {
            all_compat = false;
        }
    }
    if elide {
        return if out.is_empty() { None } else { Some(out) };
    }
    if single_quote && all_compat {
        return Some(format!("\"{arg}\""));
    }
    out.push('\'');
    Some(out)
}

/// Locale quoting in a UTF-8 locale: `‘value’`, with C escapes for what is not printable.
pub(super) fn quote(arg: &str) -> String {
    let mut out = String::from("\u{2018}");
    for ch in arg.chars() {
        match ch {
            '\\' => out.push_str("\\\\"),
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\x0C' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x0B' => out.push_str("\\v"),
            '\u{2019}' => out.push_str("\\\u{2019}"),
            c if (c.is_ascii() && (' '..='~').contains(&c))
                || (!c.is_ascii() && is_print(u32::from(c))) =>
            {
                out.push(c)
            }
            c => {
                let mut buf = [0u8; 4];
                for &b in c.encode_utf8(&mut buf).as_bytes() {
                    out.push('\\');
                    out.push(char::from(b'0' + (b >> 6)));
                    out.push(char::from(b'0' + ((b >> 3) & 7)));
                    out.push(char::from(b'0' + (b & 7)));
                }
            }
        }
    }
    out.push('\u{2019}');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_coreutils() {
        // Observed with cat/wc (quotef) and head/ls (quoteaf), coreutils 9.1, C.UTF-8.
        let f = [
            ("a b", "'a b'"),
            ("a'b", "\"a'b\""),
            ("a\"b", "'a\"b'"),
            ("a:b", "'a:b'"),
            ("é", "é"),
            ("a$b", "'a$b'"),
            ("a\nb", "'a'$'\\n''b'"),
            ("#a", "'#a'"),
            ("a#", "a#"),
            ("~a", "'~a'"),
            ("a~", "a~"),
            ("{", "'{'"),
            ("a{b", "a{b"),
            ("a\\b", "'a\\b'"),
            ("a'b\"c", "'a'\\''b\"c'"),
            ("a'b c", "\"a'b c\""),
            ("x\x7fy", "'x'$'\\177''y'"),
            ("a,b", "a,b"),
            ("a@b", "a@b"),
            ("a?b", "'a?b'"),
            ("\u{2028}", "''$'\\342\\200\\250'"),
            ("\u{a0}", "\u{a0}"),
            ("", "''"),
        ];
        for (arg, want) in f {
            assert_eq!(quotef(arg), want, "quotef {arg:?}");
        }
        assert_eq!(quoteaf("nope"), "'nope'");
        assert_eq!(quoteaf("a'b"), "\"a'b\"");
        assert_eq!(quoteaf("a:b"), "'a:b'");
        assert_eq!(quoteaf("a\n"), "'a'$'\\n'");
        assert_eq!(quote("5x"), "\u{2018}5x\u{2019}");
    }
}
