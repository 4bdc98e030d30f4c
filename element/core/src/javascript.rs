//! JavaScript runs: the host-side preparation of the code, so that top-level declarations
//! persist between runs like Python's variables do.
//!
//! The worker evaluates JavaScript in its global scope with an indirect `eval` (see
//! `den-page/worker.js`). There, `var` and `function` declarations become globals and persist,
//! and the completion value of the script is the run's `result`; but top-level `let`, `const`
//! and `class` would be scoped to that one `eval`. [`prepare`] therefore rewrites them:
//!
//! - top-level `let x` / `const x` (also with destructuring) become `var x`;
//! - a top-level `class X { … }` becomes `var X = class X { … };`.
//!
//! Only declarations at the top level of the code are touched (not in blocks, functions or
//! `for (…)` heads). What is lost: a `const` can be reassigned in a later statement, and a
//! declaration can be repeated across runs (as in a browser console). It also reports what the
//! worker needs for code with top-level `await` (which runs as the body of an async function):
//! the names declared at top level (so they are routed to the global object and persist too),
//! the top-level function declarations, whether a top-level `return` is present, and where the
//! top-level statements may start (to find the last expression statement, whose value is the
//! result). The worker has the engine check every guess: a wrong split is never used.
//!
//! This is a tokenizer, not a parser: strings, template literals (with nested `${}`), comments,
//! regular expression literals (told from division by the token before them) and brackets are
//! understood; everything else is passed through unchanged.

/// The `type` of a `<script>` child of `<foxden-den>` whose code is JavaScript for the den. The
/// host page's HTML parser does not run it: it is not one of the types browsers execute
/// ([`EXECUTED_SCRIPT_TYPES`]). (`text/x-javascript`, for instance, *is* executed.)
pub const SCRIPT_TYPE: &str = "text/x-foxden-javascript";

/// The `<script type>` values a browser runs as classic scripts (the HTML standard's JavaScript
/// MIME type essence matches, compared case-insensitively, parameters ignored), plus `module`.
pub const EXECUTED_SCRIPT_TYPES: &[&str] = &[
    "",
    "module",
    "application/ecmascript",
    "application/javascript",
    "application/x-ecmascript",
    "application/x-javascript",
    "text/ecmascript",
    "text/javascript",
    "text/javascript1.0",
    "text/javascript1.1",
    "text/javascript1.2",
    "text/javascript1.3",
    "text/javascript1.4",
    "text/javascript1.5",
    "text/jscript",
    "text/livescript",
    "text/x-ecmascript",
    "text/x-javascript",
];

/// Code prepared for the worker.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Prepared {
    /// The code with its top-level `let`/`const`/`class` declarations turned into `var`.
    pub code: String,
    /// Names bound by top-level `var`/`let`/`const`/`class` declarations, in order, no repeats.
    pub names: Vec<String>,
    /// Names of top-level function declarations (`function f`, `async function f`, `function* f`).
    pub functions: Vec<String>,
    /// UTF-16 offsets in [`Prepared::code`] where a top-level statement may start, ascending.
    pub splits: Vec<u32>,
    /// A `return` statement at the top level (the code then runs as a function body).
    pub top_return: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Ident,
    Punct,
    Str,
    Template,
    Num,
    Regex,
}

#[derive(Debug, Clone)]
struct Tok<'a> {
    kind: Kind,
    text: &'a str,
    start: usize,
    end: usize,
    /// A line break between this token and the one before it.
    nl_before: bool,
    /// Open brackets around the token (0: top level).
    depth: usize,
}

/// Words after which a `/` starts a regular expression (not a division).
const BEFORE_REGEX: &[&str] = &[
    "return",
    "typeof",
    "instanceof",
    "in",
    "of",
    "new",
    "delete",
    "void",
    "throw",
    "case",
    "do",
    "else",
    "yield",
    "await",
];

/// Three-character and two-character punctuators the tokenizer keeps whole.
const PUNCTS: &[&str] = &[
    ">>>=", "...", "===", "!==", "**=", "<<=", ">>=", ">>>", "&&=", "||=", "??=", "=>", "==", "!=",
    "<=", ">=", "&&", "||", "??", "?.", "++", "--", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=",
    "**", "<<", ">>",
];

// Any non-ASCII character counts as part of a name (no Unicode tables in the wasm: non-ASCII
// punctuation outside strings and comments is a syntax error the engine reports anyway).
fn is_ident_start(c: char) -> bool {
    c == '_' || c == '$' || c.is_ascii_alphabetic() || c == '\\' || (!c.is_ascii() && !is_space(c))
}

/// White space and line terminators other than ASCII ones.
fn is_space(c: char) -> bool {
    matches!(
        c,
        '\u{a0}' | '\u{feff}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}' | '\u{2028}' | '\u{2029}' | '\u{202f}' | '\u{205f}' | '\u{3000}'
    )
}

fn is_ident_part(c: char) -> bool {
    is_ident_start(c) || c.is_ascii_digit()
}

struct Lexer<'a> {
    src: &'a str,
    pos: usize,
    /// Template substitutions (`${…}`) open around the position.
    nest: usize,
    /// Code nested deeper than [`MAX_NEST`]: it is passed to the engine unprepared.
    too_deep: bool,
}

/// Deepest nesting of template substitutions or destructuring patterns the preparation follows
/// (each level is a frame of the host's stack: deeper code must not overflow it). Deeper code is
/// left as it is, for the engine to run or refuse.
const MAX_NEST: usize = 256;

impl<'a> Lexer<'a> {
    fn peek(&self) -> Option<char> {
        self.src[self.pos..].chars().next()
    }

    fn peek_at(&self, n: usize) -> Option<char> {
        self.src[self.pos..].chars().nth(n)
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    /// Skips blanks and comments; true if a line break was among them.
    fn skip_blank(&mut self) -> bool {
        let mut nl = false;
        while let Some(c) = self.peek() {
            if c == '\n' || c == '\r' || c == '\u{2028}' || c == '\u{2029}' {
                nl = true;
                self.bump();
            } else if c.is_ascii_whitespace() || is_space(c) {
                self.bump();
            } else if c == '/' && self.peek_at(1) == Some('/') {
                while let Some(c) = self.peek() {
                    if c == '\n' || c == '\r' {
                        break;
                    }
                    self.bump();
                }
            } else if c == '/' && self.peek_at(1) == Some('*') {
                self.pos += 2;
                match self.src[self.pos..].find("*/") {
                    Some(i) => {
                        nl |= self.src[self.pos..self.pos + i].contains(['\n', '\r']);
                        self.pos += i + 2;
                    }
                    None => self.pos = self.src.len(),
                }
            } else if c == '#' && self.pos == 0 && self.peek_at(1) == Some('!') {
                // A hashbang line.
                while let Some(c) = self.peek() {
                    if c == '\n' {
                        break;
                    }
                    self.bump();
                }
            } else {
                break;
            }
        }
        nl
    }

    fn string(&mut self, quote: char) {
        self.bump();
        while let Some(c) = self.bump() {
            if c == '\\' {
                self.bump();
            } else if c == quote || c == '\n' {
                break;
            }
        }
    }

    /// A template literal from its opening backquote (or from inside, after a `${…}`).
    fn template(&mut self) {
        self.bump();
        self.template_rest();
    }

    fn template_rest(&mut self) {
        while let Some(c) = self.bump() {
            match c {
                '\\' => {
                    self.bump();
                }
                '`' => return,
                '$' if self.peek() == Some('{') => {
                    self.bump();
                    if self.nest >= MAX_NEST {
                        self.too_deep = true;
                        continue;
                    }
                    // The substitution is code: lex it (and drop its tokens) up to its `}`.
                    let mut inner = Vec::new();
                    self.nest += 1;
                    lex_until_close(self, &mut inner, true);
                    self.nest -= 1;
                }
                _ => {}
            }
        }
    }

    fn regex(&mut self) {
        self.bump();
        let mut class = false;
        while let Some(c) = self.bump() {
            match c {
                '\\' => {
                    self.bump();
                }
                '[' => class = true,
                ']' => class = false,
                '/' if !class => break,
                '\n' => return,
                _ => {}
            }
        }
        while self.peek().is_some_and(is_ident_part) {
            self.bump();
        }
    }
}

/// True if a `/` after `prev` starts a regular expression.
fn regex_allowed(prev: Option<&Tok>) -> bool {
    match prev {
        None => true,
        Some(t) => match t.kind {
            Kind::Ident => BEFORE_REGEX.contains(&t.text),
            Kind::Punct => !matches!(t.text, ")" | "]" | "}" | "++" | "--"),
            _ => false,
        },
    }
}

/// Lexes tokens into `out` up to the end of input, or (with `stop_at_close`) up to the `}` that
/// closes the bracket level it started at, which it consumes.
fn lex_until_close<'a>(lx: &mut Lexer<'a>, out: &mut Vec<Tok<'a>>, stop_at_close: bool) {
    let mut depth = 0usize;
    let mut prev: Option<Tok<'a>> = None;
    loop {
        let nl_before = lx.skip_blank();
        let start = lx.pos;
        let Some(c) = lx.peek() else { return };
        let kind = if c == '"' || c == '\'' {
            lx.string(c);
            Kind::Str
        } else if c == '`' {
            lx.template();
            Kind::Template
        } else if c.is_ascii_digit()
            || (c == '.' && lx.peek_at(1).is_some_and(|d| d.is_ascii_digit()))
        {
            while lx
                .peek()
                .is_some_and(|d| d.is_ascii_alphanumeric() || d == '.' || d == '_')
            {
                lx.bump();
            }
            Kind::Num
        } else if is_ident_start(c) || c == '#' {
            lx.bump();
            while lx.peek().is_some_and(is_ident_part) {
                lx.bump();
            }
            Kind::Ident
        } else if c == '/' && regex_allowed(prev.as_ref()) {
            lx.regex();
            Kind::Regex
        } else {
            let rest = &lx.src[lx.pos..];
            match PUNCTS.iter().find(|p| rest.starts_with(**p)) {
                Some(p) => lx.pos += p.len(),
                None => {
                    lx.bump();
                }
            }
            Kind::Punct
        };
        let text = &lx.src[start..lx.pos];
        if kind == Kind::Punct && matches!(text, ")" | "]" | "}") {
            if depth == 0 {
                if stop_at_close && text == "}" {
                    return;
                }
            } else {
                depth -= 1;
            }
        }
        let tok = Tok {
            kind,
            text,
            start,
            end: lx.pos,
            nl_before,
            depth,
        };
        if kind == Kind::Punct && matches!(text, "(" | "[" | "{") {
            depth += 1;
        }
        out.push(tok.clone());
        prev = Some(tok);
    }
}

/// The tokens of `src`, or `None` when it nests deeper than [`MAX_NEST`].
fn lex(src: &str) -> Option<Vec<Tok<'_>>> {
    let mut out = Vec::new();
    let mut lx = Lexer {
        src,
        pos: 0,
        nest: 0,
        too_deep: false,
    };
    lex_until_close(&mut lx, &mut out, false);
    (!lx.too_deep).then_some(out)
}

/// True if a token ends an expression (so a line break after it may end the statement).
fn ends_expression(t: &Tok) -> bool {
    match t.kind {
        Kind::Ident => !matches!(
            t.text,
            "return"
                | "typeof"
                | "instanceof"
                | "in"
                | "of"
                | "new"
                | "delete"
                | "void"
                | "throw"
                | "case"
                | "do"
                | "else"
                | "yield"
                | "await"
                | "var"
                | "let"
                | "const"
                | "extends"
        ),
        Kind::Punct => matches!(t.text, ")" | "]" | "}" | "++" | "--"),
        _ => true,
    }
}

/// Indexes of the tokens that may start a top-level statement.
fn statement_starts(toks: &[Tok]) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut prev: Option<&Tok> = None;
    for (i, t) in toks.iter().enumerate() {
        if t.depth != 0 {
            continue;
        }
        let start = match prev {
            None => true,
            Some(p) if p.kind == Kind::Punct && p.text == ";" => true,
            // After `}` (a block, or an object literal going on) and after a line break that
            // follows a complete expression (automatic semicolon insertion), unless the token
            // can only continue the expression.
            Some(p) => {
                (p.kind == Kind::Punct && p.text == "}" || t.nl_before && ends_expression(p))
                    && (t.kind != Kind::Punct
                        || matches!(t.text, "(" | "[" | "{" | "!" | "~" | "++" | "--"))
            }
        };
        if start {
            starts.push(i);
        }
        prev = Some(t);
    }
    starts
}

/// The names bound by a binding pattern or identifier starting at `toks[i]`; returns the index
/// after it.
fn binding(toks: &[Tok], mut i: usize, names: &mut Vec<String>, level: usize) -> usize {
    let Some(t) = toks.get(i) else { return i };
    if level >= MAX_NEST && matches!(t.text, "{" | "[") {
        // Too deep to follow (see MAX_NEST): its names are not routed; the engine still runs it.
        return skip_bracket(toks, i);
    }
    match (t.kind, t.text) {
        (Kind::Ident, _) => {
            names.push(t.text.to_owned());
            i + 1
        }
        (Kind::Punct, "{") => {
            let depth = t.depth;
            i += 1;
            // { key: target = default, short = default, [computed]: target, ...rest }
            while let Some(t) = toks.get(i) {
                if t.depth == depth && t.text == "}" {
                    return i + 1;
                }
                if t.text == "," {
                    i += 1;
                    continue;
                }
                if t.text == "..." {
                    i = binding(toks, i + 1, names, level + 1);
                    continue;
                }
                // The key: an identifier, string, number or [computed].
                let key = i;
                if t.text == "[" {
                    i = skip_bracket(toks, i);
                } else {
                    i += 1;
                }
                if toks.get(i).is_some_and(|t| t.text == ":") {
                    i = binding(toks, i + 1, names, level + 1);
                } else if toks[key].kind == Kind::Ident {
                    names.push(toks[key].text.to_owned());
                }
                i = skip_default(toks, i, depth + 1);
            }
            i
        }
        (Kind::Punct, "[") => {
            let depth = t.depth;
            i += 1;
            while let Some(t) = toks.get(i) {
                if t.depth == depth && t.text == "]" {
                    return i + 1;
                }
                if t.text == "," {
                    i += 1;
                    continue;
                }
                if t.text == "..." {
                    i += 1;
                }
                i = binding(toks, i, names, level + 1);
                i = skip_default(toks, i, depth + 1);
            }
            i
        }
        _ => i + 1,
    }
}

/// Index after the bracket opened at `toks[i]`.
fn skip_bracket(toks: &[Tok], i: usize) -> usize {
    let depth = toks[i].depth;
    let mut j = i + 1;
    while let Some(t) = toks.get(j) {
        j += 1;
        if t.depth == depth && matches!(t.text, ")" | "]" | "}") {
            break;
        }
    }
    j
}

/// Skips a `= default` (or anything unexpected) at bracket depth `depth`, up to the next `,` or
/// closing bracket there.
fn skip_default(toks: &[Tok], mut i: usize, depth: usize) -> usize {
    while let Some(t) = toks.get(i) {
        if t.depth < depth || (t.depth == depth && t.text == ",") {
            break;
        }
        i += 1;
    }
    i
}

/// Prepares JavaScript code for the worker (see the module docs).
pub fn prepare(code: &str) -> Prepared {
    let Some(toks) = lex(code) else {
        return Prepared {
            code: code.to_owned(),
            ..Prepared::default()
        };
    };
    let starts = statement_starts(&toks);
    // For each token, the first top-level `{` from it on (a class body), found in one pass.
    let mut next_brace = vec![toks.len(); toks.len() + 1];
    for k in (0..toks.len()).rev() {
        next_brace[k] = if toks[k].depth == 0 && toks[k].text == "{" {
            k
        } else {
            next_brace[k + 1]
        };
    }
    let is_start = {
        let mut v = vec![false; toks.len()];
        for &i in &starts {
            v[i] = true;
        }
        v
    };
    let mut names: Vec<String> = Vec::new();
    let mut functions: Vec<String> = Vec::new();
    let mut top_return = false;
    // Edits of the source: (byte offset, bytes removed, text inserted), in order.
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let t = &toks[i];
        if t.depth != 0 || !is_start[i] || t.kind != Kind::Ident {
            i += 1;
            continue;
        }
        let next = toks.get(i + 1);
        match t.text {
            "return" => top_return = true,
            "var" | "let" | "const" => {
                let declares = next.is_some_and(|n| {
                    (n.kind == Kind::Ident && !matches!(n.text, "in" | "instanceof"))
                        || n.text == "["
                        || n.text == "{"
                });
                if !declares {
                    i += 1;
                    continue;
                }
                if t.text != "var" {
                    edits.push((t.start, t.text.len(), "var".into()));
                }
                // The bindings: pattern (= initializer)?, … up to the end of the statement.
                let mut j = i + 1;
                loop {
                    j = binding(&toks, j, &mut names, 0);
                    while let Some(u) = toks.get(j) {
                        if u.depth == 0 && (u.text == "," || u.text == ";" || is_start[j]) {
                            break;
                        }
                        j += 1;
                    }
                    match toks.get(j) {
                        Some(u) if u.text == "," && u.depth == 0 && !is_start[j] => j += 1,
                        _ => break,
                    }
                }
                i = j;
                continue;
            }
            "class" => {
                if let Some(n) = next.filter(|n| n.kind == Kind::Ident && n.text != "extends") {
                    // The body is the first `{` at the top level after the name.
                    if let Some(&open) = next_brace.get(i + 2).filter(|&&k| k < toks.len()) {
                        let close = skip_bracket(&toks, open);
                        edits.push((t.start, 0, format!("var {} = ", n.text)));
                        edits.push((toks[close - 1].end, 0, ";".into()));
                        names.push(n.text.to_owned());
                        i = close;
                        continue;
                    }
                }
            }
            "function" | "async" => {
                let mut k = i + 1;
                if t.text == "async" {
                    if !toks
                        .get(k)
                        .is_some_and(|u| u.text == "function" && !u.nl_before)
                    {
                        i += 1;
                        continue;
                    }
                    k += 1;
                }
                if toks.get(k).is_some_and(|u| u.text == "*") {
                    k += 1;
                }
                if let Some(n) = toks.get(k).filter(|u| u.kind == Kind::Ident) {
                    functions.push(n.text.to_owned());
                }
            }
            _ => {}
        }
        i += 1;
    }
    // Apply the edits; map the statement starts into the new text (as UTF-16 offsets).
    let mut out = String::with_capacity(code.len() + 16 * edits.len());
    let mut last = 0;
    let mut split_bytes: Vec<usize> = Vec::with_capacity(starts.len());
    let mut e = 0;
    for &s in &starts {
        let at = toks[s].start;
        while e < edits.len() && edits[e].0 < at {
            let (pos, del, ins) = &edits[e];
            out.push_str(&code[last..*pos]);
            out.push_str(ins);
            last = pos + del;
            e += 1;
        }
        out.push_str(&code[last..at]);
        last = at;
        split_bytes.push(out.len());
    }
    for (pos, del, ins) in &edits[e..] {
        out.push_str(&code[last..*pos]);
        out.push_str(ins);
        last = pos + del;
    }
    out.push_str(&code[last..]);
    let mut splits = Vec::with_capacity(split_bytes.len());
    let mut units = 0u32;
    let mut byte = 0usize;
    for b in split_bytes {
        units += out[byte..b].encode_utf16().count() as u32;
        byte = b;
        splits.push(units);
    }
    let mut seen = std::collections::HashSet::with_capacity(names.len());
    let names: Vec<String> = names
        .into_iter()
        .filter(|n| seen.insert(n.clone()))
        .collect();
    functions.dedup();
    Prepared {
        code: out,
        names,
        functions,
        splits,
        top_return,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `f` on a thread with the stack of the host's wasm module (1 MiB).
    fn on_wasm_stack(f: impl FnOnce() + Send + 'static) {
        std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(f)
            .expect("thread")
            .join()
            .expect("no stack overflow");
    }

    #[test]
    fn hostile_nesting_is_passed_through_not_followed() {
        on_wasm_stack(|| {
            let deep = "`${".repeat(1_000_000);
            let p = prepare(&deep);
            assert_eq!(p.code, deep);
            assert!(p.names.is_empty() && p.splits.is_empty());
            let pattern = format!("let {}", "[".repeat(1_000_000));
            assert!(prepare(&pattern).code.starts_with("var "));
            let obj = format!(
                "const {}x{} = v",
                "{a:".repeat(100_000),
                "}".repeat(100_000)
            );
            assert!(prepare(&obj).code.starts_with("var "));
        });
        // Nesting within the limit is still followed.
        let p = prepare("let x = `a${`b${`c${1}`}`}`; const [[y]] = [[2]]");
        assert_eq!(p.names, ["x", "y"]);
    }

    #[test]
    fn many_classes_or_names_take_linear_time() {
        let classes = "class A\n".repeat(100_000);
        assert!(prepare(&classes).names.is_empty());
        let names: Vec<String> = (0..200_000).map(|i| format!("a{i}")).collect();
        let p = prepare(&format!("var {}", names.join(",")));
        assert_eq!(p.names.len(), 200_000);
    }

    fn tails(p: &Prepared) -> Vec<String> {
        let units: Vec<u16> = p.code.encode_utf16().collect();
        p.splits
            .iter()
            .map(|&s| String::from_utf16_lossy(&units[s as usize..]))
            .collect()
    }

    #[test]
    fn top_level_let_const_class_become_var() {
        let p = prepare("let a = 1;\nconst { b, c: [d, e = f(1, 2)], ...g } = o\nclass K extends Base { m() { let x; } }\nK");
        assert_eq!(
            p.code,
            "var a = 1;\nvar { b, c: [d, e = f(1, 2)], ...g } = o\nvar K = class K extends Base { m() { let x; } };\nK"
        );
        assert_eq!(p.names, ["a", "b", "d", "e", "g", "K"]);
        assert!(!p.top_return);
    }

    #[test]
    fn nested_declarations_are_left_alone() {
        let code = "for (let i = 0; i < 3; i++) { const j = i; }\nif (x) { let y = 2 }\nfunction f() { const z = 1; return z }\n() => { let q }";
        let p = prepare(code);
        assert_eq!(p.code, code);
        assert!(p.names.is_empty());
        assert_eq!(p.functions, ["f"]);
        assert!(!p.top_return, "the return is inside a function");
    }

    #[test]
    fn strings_comments_templates_and_regexes_hide_keywords() {
        let code = "'let a'; \"const b\" // let c\n/* const d */ `let e ${ `const f ${ {g: 1}.g }` } }` ; /let h}/.test(s) ; x = a / b / c\nlet z = 3";
        let p = prepare(code);
        assert!(p.code.ends_with("var z = 3"), "{}", p.code);
        assert_eq!(p.code.matches("var").count(), 1);
        assert_eq!(p.names, ["z"]);
    }

    #[test]
    fn several_declarators_and_asi() {
        let p =
            prepare("let a = [1, 2], b, c = {x: 1}\nlet d = a\n  .map(v => v * 2)\nconst [e] = d");
        assert_eq!(p.names, ["a", "b", "c", "d", "e"]);
        assert!(p.code.starts_with("var a"));
        assert!(p.code.contains("\nvar d = a\n  .map"));
        assert!(p.code.contains("\nvar [e] = d"));
    }

    #[test]
    fn statement_starts_give_the_tails() {
        let p = prepare("const x = await f()\nx.y;\nif (x) { g() }\nx + 1");
        assert_eq!(
            tails(&p),
            [
                "var x = await f()\nx.y;\nif (x) { g() }\nx + 1",
                "x.y;\nif (x) { g() }\nx + 1",
                "if (x) { g() }\nx + 1",
                "x + 1"
            ]
        );
        // A continued line is not a statement start.
        let p = prepare("a = 1\n+ 2\n(b)");
        assert_eq!(tails(&p), ["a = 1\n+ 2\n(b)", "(b)"]);
    }

    #[test]
    fn splits_are_utf16_offsets_in_the_new_code() {
        let p = prepare("let s = '😀é';\ns");
        assert_eq!(p.code, "var s = '😀é';\ns");
        assert_eq!(tails(&p).last().map(String::as_str), Some("s"));
        let p = prepare("const café\u{a0}= 1;\u{3000}let ñ2 = café\nñ2");
        assert_eq!(p.names, ["café", "ñ2"]);
        assert_eq!(tails(&p).last().map(String::as_str), Some("ñ2"));
    }

    #[test]
    fn functions_returns_and_odd_lets() {
        let p = prepare("async function a() {}\nfunction* b() {}\nlet = 5\nreturn a");
        assert_eq!(p.functions, ["a", "b"]);
        assert!(p.top_return);
        assert!(p.code.contains("let = 5"), "`let` as a name stays");
        assert!(p.names.is_empty());
    }

    #[test]
    fn the_script_type_is_not_one_browsers_run() {
        let t = SCRIPT_TYPE.to_ascii_lowercase();
        assert!(!EXECUTED_SCRIPT_TYPES.contains(&t.as_str()));
        assert!(!EXECUTED_SCRIPT_TYPES.contains(&"text/x-python"));
    }

    #[test]
    fn unterminated_input_does_not_panic() {
        for code in [
            "`abc ${",
            "'abc",
            "/* x",
            "let {a, [b",
            "class A extends",
            "/[",
            "let",
            "}}}",
            "a ? b : c ${",
        ] {
            let p = prepare(code);
            assert!(p.code.len() >= code.len().saturating_sub(3));
        }
    }
}
