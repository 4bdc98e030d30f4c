//! The command line: words, quotes and `|`, read the way `sh` (dash) reads them; every
//! other piece of shell syntax is refused with a message naming it.

/// Why a command line was refused (exit code 2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum ParseError {
    /// Shell syntax that den.sh does not support; names it.
    Unsupported(String),
    /// A malformed line (what `sh` calls a syntax error).
    Syntax(String),
}

impl ParseError {
    /// The message shown on stderr.
    pub(super) fn message(&self) -> String {
        match self {
            ParseError::Unsupported(what) => format!("den.sh: unsupported: {what}\n"),
            ParseError::Syntax(what) => format!("den.sh: syntax error: {what}\n"),
        }
    }
}

/// A word being read.
#[derive(Default)]
struct Word {
    text: String,
    /// Some character came from quotes or a backslash.
    quoted: bool,
    /// Byte length of an unquoted `NAME=` prefix (an assignment), if the word has one.
    assignment: Option<usize>,
    /// The word has started (even if still empty, as with `''`).
    started: bool,
    /// The text so far is not a NAME (kept as characters come: checking the whole text at
    /// each `=` made `a-====…` quadratic).
    not_name: bool,
}

impl Word {
    fn push(&mut self, c: char, quoted: bool) {
        self.started = true;
        if quoted {
            self.quoted = true;
        } else if c == '='
            && !self.quoted
            && self.assignment.is_none()
            && !self.text.is_empty()
            && !self.not_name
        {
            self.assignment = Some(self.text.len());
        }
        let name_char = if self.text.is_empty() {
            c == '_' || c.is_ascii_alphabetic()
        } else {
            c == '_' || c.is_ascii_alphanumeric()
        };
        self.not_name |= !name_char;
        self.text.push(c);
    }
}

enum Token {
    Word(Word),
    Pipe,
    Newline,
}

/// Words that are reserved in command position (dash).
const RESERVED: [&str; 16] = [
    "!", "{", "}", "case", "do", "done", "elif", "else", "esac", "fi", "for", "if", "in", "then",
    "until", "while",
];

fn unsupported(what: &str) -> ParseError {
    ParseError::Unsupported(what.to_owned())
}

fn tokenize(line: &str) -> Result<Vec<Token>, ParseError> {
    let mut tokens = Vec::new();
    let mut word = Word::default();
    let mut chars = line.chars().peekable();
    macro_rules! end_word {
        () => {
            if word.started {
                tokens.push(Token::Word(std::mem::take(&mut word)));
            }
        };
    }
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => end_word!(),
            '\n' => {
                end_word!();
                tokens.push(Token::Newline);
            }
            '|' => {
                if chars.peek() == Some(&'|') {
                    return Err(unsupported("'||' (command lists); use one pipeline"));
                }
                end_word!();
                tokens.push(Token::Pipe);
            }
            '&' => {
                return Err(unsupported(if chars.peek() == Some(&'&') {
                    "'&&' (command lists); use one pipeline"
                } else {
                    "'&' (background jobs)"
                }))
            }
            ';' => return Err(unsupported("';' (command lists); use one pipeline")),
            '<' | '>' => {
                return Err(unsupported(
                    "redirections ('<', '>'); the shell is read-only, use a pipeline",
                ))
            }
            '(' | ')' => return Err(unsupported("parentheses (subshells)")),
            '$' => {
                return Err(unsupported(
                    "'$' (variables, command substitution); quote it with '...'",
                ))
            }
            '`' => return Err(unsupported("backticks (command substitution)")),
            '*' | '?' | '[' => {
                return Err(unsupported(
                    "glob characters ('*', '?', '['); quote them to use them literally",
                ))
            }
            '#' if !word.started => {
                return Err(unsupported(
                    "comments ('#' at the start of a word); quote it",
                ))
            }
            '~' if !word.started => {
                return Err(unsupported(
                    "tilde expansion ('~' at the start of a word); quote it",
                ))
            }
            '\0' => return Err(unsupported("a NUL character")),
            '\\' => match chars.next() {
                Some('\n') => {}
                Some(n) => word.push(n, true),
                None => word.push('\\', false),
            },
            '\'' => {
                word.started = true;
                word.quoted = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(q) => word.push(q, true),
                        None => {
                            return Err(ParseError::Syntax("unterminated quoted string".into()))
                        }
                    }
                }
            }
            '"' => {
                word.started = true;
                word.quoted = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.peek() {
                            Some(&n @ ('$' | '`' | '"' | '\\')) => {
                                chars.next();
                                word.push(n, true);
                            }
                            Some('\n') => {
                                chars.next();
                            }
                            _ => word.push('\\', true),
                        },
                        Some('$') => {
                            return Err(unsupported(
                                "'$' inside double quotes (expansion); use '...' or \\$",
                            ))
                        }
                        Some('`') => {
                            return Err(unsupported(
                                "backticks inside double quotes (command substitution)",
                            ))
                        }
                        Some(q) => word.push(q, true),
                        None => {
                            return Err(ParseError::Syntax("unterminated quoted string".into()))
                        }
                    }
                }
            }
            c => word.push(c, false),
        }
    }
    end_word!();
    Ok(tokens)
}

/// Parses a command line into a pipeline: one argument vector per command (the first
/// element is the command name). An empty or blank line is an empty pipeline.
///
/// Newlines are allowed where they separate nothing: blank lines, a newline ending the
/// pipeline, a newline after `|` (as in `sh`). A second command after a newline is
/// refused (command lists are not supported).
pub(super) fn parse(line: &str) -> Result<Vec<Vec<String>>, ParseError> {
    let mut pipeline = Vec::new();
    let mut current: Vec<String> = Vec::new();
    let mut after_pipe = false;
    let mut ended = false;
    for t in tokenize(line)? {
        match t {
            Token::Pipe => {
                if current.is_empty() {
                    return Err(ParseError::Syntax("'|' without a command before it".into()));
                }
                pipeline.push(std::mem::take(&mut current));
                after_pipe = true;
            }
            Token::Newline => {
                if !current.is_empty() {
                    pipeline.push(std::mem::take(&mut current));
                    ended = true;
                }
            }
            Token::Word(w) => {
                if ended {
                    return Err(unsupported(
                        "a newline between commands (command lists); use one pipeline",
                    ));
                }
                if current.is_empty() {
                    if !w.quoted && RESERVED.contains(&w.text.as_str()) {
                        return Err(ParseError::Unsupported(format!(
                            "the reserved word '{}' (compound commands)",
                            w.text
                        )));
                    }
                    if w.assignment.is_some() {
                        return Err(ParseError::Unsupported(format!(
                            "variable assignments ('{}')",
                            w.text
                        )));
                    }
                }
                after_pipe = false;
                current.push(w.text);
            }
        }
    }
    if after_pipe && current.is_empty() {
        return Err(ParseError::Syntax("'|' without a command after it".into()));
    }
    if !current.is_empty() {
        pipeline.push(current);
    }
    Ok(pipeline)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<Vec<String>> {
        parse(line).unwrap_or_else(|e| panic!("{line:?}: {e:?}"))
    }

    fn refused(line: &str) -> ParseError {
        match parse(line) {
            Ok(p) => panic!("{line:?} parsed as {p:?}"),
            Err(e) => e,
        }
    }

    #[test]
    fn words_and_quotes() {
        assert_eq!(words("  "), Vec::<Vec<String>>::new());
        assert_eq!(words("ls"), vec![vec!["ls"]]);
        assert_eq!(
            words("echo 'a b'  \"c d\" e\\ f"),
            vec![vec!["echo", "a b", "c d", "e f"]]
        );
        assert_eq!(words("echo 'a'\"b\"c ''"), vec![vec!["echo", "abc", ""]]);
        assert_eq!(
            words(r#"echo "a\b\"\\\$\`c""#),
            vec![vec!["echo", "a\\b\"\\$`c"]]
        );
        assert_eq!(words("echo a\\"), vec![vec!["echo", "a\\"]]);
        assert_eq!(words("echo a\\\nb"), vec![vec!["echo", "ab"]]);
        assert_eq!(
            words("echo 'a\nb' a#b a~ a=b ]"),
            vec![vec!["echo", "a\nb", "a#b", "a~", "a=b", "]"]]
        );
        assert_eq!(
            words("cat f|grep x | wc -l"),
            vec![vec!["cat", "f"], vec!["grep", "x"], vec!["wc", "-l"]]
        );
        assert_eq!(words("'if' \"A=b\""), vec![vec!["if", "A=b"]]);
        assert_eq!(words("\n\nls\n\n"), vec![vec!["ls"]]);
        assert_eq!(words("ls |\n\n wc"), vec![vec!["ls"], vec!["wc"]]);
        assert_eq!(words("\n \t\n"), Vec::<Vec<String>>::new());
        assert_eq!(
            words("echo { } ! done"),
            vec![vec!["echo", "{", "}", "!", "done"]]
        );
        assert_eq!(
            words("echo \\$ '$' \"\\$\" \\*"),
            vec![vec!["echo", "$", "$", "$", "*"]]
        );
    }

    #[test]
    fn refusals() {
        for (line, needle) in [
            ("ls; ls", "';'"),
            ("ls && ls", "'&&'"),
            ("ls || ls", "'||'"),
            ("ls &", "'&'"),
            ("ls > x", "redirections"),
            ("ls < x", "redirections"),
            ("ls 2>&1", "redirections"),
            ("(ls)", "parentheses"),
            ("echo $HOME", "'$'"),
            ("echo \"$x\"", "'$'"),
            ("echo `ls`", "backticks"),
            ("ls *.csv", "glob"),
            ("ls a?", "glob"),
            ("ls [ab]", "glob"),
            ("echo #x", "comments"),
            ("echo ~", "tilde"),
            ("ls\nls", "newline"),
            ("ls\n\nwc", "newline"),
            ("\nls | wc\necho", "newline"),
            ("if x", "reserved word 'if'"),
            ("! ls", "reserved word '!'"),
            ("ls | { cat", "reserved word '{'"),
            ("A=b ls", "variable assignments"),
        ] {
            let e = refused(line);
            assert!(matches!(e, ParseError::Unsupported(_)), "{line:?}: {e:?}");
            assert!(e.message().contains(needle), "{line:?}: {}", e.message());
        }
        for line in [
            "| ls",
            "ls |",
            "ls | | wc",
            "echo 'a",
            "echo \"a",
            "ls\n| wc",
            "ls |\n",
        ] {
            assert!(matches!(refused(line), ParseError::Syntax(_)), "{line:?}");
        }
    }
}
