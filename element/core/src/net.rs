//! Network access of a den, brokered by the host: off by default; with `openDen({ network })`
//! Python's `foxden.fetch(url, …)` asks the host, which checks the request here (allowlist,
//! method, rate, sizes), makes it itself, and cuts the answer at `maxResponseBytes`. The den page
//! keeps its CSP `connect-src 'none'`: the sandbox never reaches the network.
//!
//! Everything that decides is here, with native tests:
//! - [`Url`]: a strict, small parser of absolute `http:`/`https:` URLs. It refuses what browsers
//!   and servers read in different ways (userinfo, `\`, numeric hosts other than dotted IPv4,
//!   dot segments, encoded slashes, characters a browser would re-encode) instead of guessing,
//!   and gives the one canonical form ([`Url::href`]) that the host fetches.
//! - [`Pattern`]: an allowlist entry, `scheme://host[:port|:*]/path-glob` (`*.example.com`
//!   matches subdomains; `*` in the path matches any characters).
//! - [`NetworkConfig`]: the allowlist, the methods, the rate and the response cap, validated.
//! - [`RateWindow`]: a sliding minute of requests made.
//! - [`Broker::check`]: one request, allowed (a [`Checked`] request) or refused with a
//!   [`Refusal`] reason and a clear message.
//! - [`ResponseCap`]: counts answer bytes and cuts at the cap.

use std::fmt;

/// Default `network.perMinute`.
pub const DEFAULT_PER_MINUTE: u64 = 5;
/// Largest `network.perMinute`.
pub const MAX_PER_MINUTE: u64 = 10_000;
/// Default `network.maxResponseBytes` (1 MiB).
pub const DEFAULT_MAX_RESPONSE_BYTES: u64 = 1 << 20;
/// Largest `network.maxResponseBytes` (256 MiB).
pub const MAX_RESPONSE_BYTES: u64 = 256 << 20;
/// Longest URL a request may name (bytes).
pub const MAX_URL_BYTES: usize = 8192;
/// Largest request body (bytes).
pub const MAX_BODY_BYTES: usize = 1 << 20;
/// Most request headers.
pub const MAX_HEADERS: usize = 32;
/// Most bytes in all request header names and values together.
pub const MAX_HEADER_BYTES: usize = 16 * 1024;
/// Most allowlist patterns.
pub const MAX_PATTERNS: usize = 64;
/// Most requests recorded (and answered with a record) per run; later ones are refused unrecorded.
pub const MAX_RECORDS_PER_RUN: usize = 1000;
/// Most response headers handed to Python, and their bytes together.
pub const MAX_RESPONSE_HEADERS: usize = 64;
/// Bytes of response header names and values handed to Python, together.
pub const MAX_RESPONSE_HEADER_BYTES: usize = 16 * 1024;

/// `http` or `https`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// `http:`
    Http,
    /// `https:`
    Https,
}

impl Scheme {
    /// The port used when the URL names none.
    pub const fn default_port(self) -> u16 {
        match self {
            Scheme::Http => 80,
            Scheme::Https => 443,
        }
    }
    /// `"http"` / `"https"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Scheme::Http => "http",
            Scheme::Https => "https",
        }
    }
    /// Splits `http://` or `https://` (any case) off `s`.
    fn strip(s: &str) -> Option<(Scheme, &str)> {
        let at = crate::find_str(s, "://")?;
        let (scheme, rest) = (&s[..at], &s[at + 3..]);
        let scheme = match scheme.to_ascii_lowercase().as_str() {
            "http" => Scheme::Http,
            "https" => Scheme::Https,
            _ => return None,
        };
        Some((scheme, rest))
    }
}

/// Why a URL (or the URL part of a pattern) was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlError(pub String);

impl fmt::Display for UrlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn bad<T>(why: impl Into<String>) -> Result<T, UrlError> {
    Err(UrlError(why.into()))
}

/// An absolute `http:` / `https:` URL, normalized: lower-case scheme and host, the port always
/// known, the fragment dropped (it is never sent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Url {
    /// The scheme.
    pub scheme: Scheme,
    /// The host: a lower-case DNS name or a dotted IPv4 address.
    pub host: String,
    /// The port (the scheme's default when the URL names none).
    pub port: u16,
    /// The path and query as written (starts with `/`).
    pub path: String,
}

/// Characters a URL path or query may hold as they are (RFC 3986 unreserved, sub-delims, `:`,
/// `@`, `/`, `%`, and `?` after the path). Everything else must be percent-encoded.
fn url_char_ok(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@/%?".contains(&c)
}

/// Checks a host: a lower-case DNS name (labels of `a-z 0-9 -`), or a dotted-decimal IPv4
/// address. Anything a browser would read as a number (`2130706433`, `0x7f.1`, `0177.0.0.1`) but
/// is not written as canonical dotted IPv4 is refused.
fn check_host(host: &str) -> Result<String, UrlError> {
    if host.is_empty() {
        return bad("the URL has no host");
    }
    if host.starts_with('[') {
        return bad("IPv6 address hosts are not supported");
    }
    if !host.is_ascii() {
        return bad("a non-ASCII host must be written in punycode (xn--…)");
    }
    let host = host.to_ascii_lowercase();
    if host.len() > 253 {
        return bad("the host name is longer than 253 characters");
    }
    if host.ends_with('.') {
        return bad("the host ends with a dot");
    }
    let labels: Vec<&str> = host.split('.').collect();
    for l in &labels {
        if l.is_empty() || l.len() > 63 {
            return bad(format!("the host {host:?} has an empty or over-long label"));
        }
        if !l.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-') {
            return bad(format!(
                "the host {host:?} has a character other than a-z, 0-9, - and ."
            ));
        }
        if l.starts_with('-') || l.ends_with('-') {
            return bad(format!(
                "the host {host:?} has a label starting or ending with -"
            ));
        }
    }
    // A browser reads a host whose last label is a number (decimal, or 0x… hex) as IPv4.
    let last = labels[labels.len() - 1];
    let numeric = last.bytes().all(|c| c.is_ascii_digit())
        || (last.starts_with("0x") && last[2..].bytes().all(|c| c.is_ascii_hexdigit()));
    if numeric {
        let canonical = labels.len() == 4
            && labels.iter().all(|l| {
                l.bytes().all(|c| c.is_ascii_digit())
                    && (l.len() == 1 || !l.starts_with('0'))
                    && l.parse::<u16>().is_ok_and(|n| n <= 255)
            });
        if !canonical {
            return bad(format!(
                "the numeric host {host:?} is not a dotted IPv4 address like 127.0.0.1"
            ));
        }
    }
    Ok(host)
}

fn check_port(port: &str) -> Result<u16, UrlError> {
    if port.is_empty() || port.len() > 5 || !port.bytes().all(|c| c.is_ascii_digit()) {
        return bad(format!("the port {port:?} is not a number from 1 to 65535"));
    }
    match port.parse::<u32>() {
        Ok(n @ 1..=65535) => Ok(n as u16),
        _ => bad(format!("the port {port:?} is not a number from 1 to 65535")),
    }
}

/// Checks the path and query of a URL (or a pattern, with `*` allowed): characters, percent
/// escapes, and no dot segment or encoded slash a browser or server would resolve differently.
fn check_path(path: &str, glob: bool) -> Result<(), UrlError> {
    let b = path.as_bytes();
    let mut i = 0;
    let mut in_query = false;
    while i < b.len() {
        let c = b[i];
        in_query |= c == b'?';
        if c == b'%' {
            let hex = |j: usize| b.get(j).is_some_and(|h| h.is_ascii_hexdigit());
            if !(hex(i + 1) && hex(i + 2)) {
                return bad("a % in the path is not followed by two hex digits");
            }
            // In the path, a server may decode them into segments; in the query they are data.
            if !in_query {
                if let Some(why) = ambiguous_escape(path, i) {
                    return bad(format!("the path holds {why}"));
                }
            }
            i += 3;
            continue;
        }
        if !(url_char_ok(c) || (glob && c == b'*')) {
            return bad(format!(
                "the character {:?} must be percent-encoded",
                c as char
            ));
        }
        i += 1;
    }
    let only_path = path.split('?').next().unwrap_or("");
    for seg in only_path.split('/') {
        if dot_segment(seg) {
            return bad("the path has a . or .. segment (also as %2e, or followed by ;parameters or spaces)");
        }
    }
    Ok(())
}

/// Why the escape at `path[i]` (a `%` and two hex digits, in the path) could reach a server as
/// something else than the bytes a browser sends, or `None`. Refused: escapes a server may
/// cut the path at (`%00`-`%1F`, `%7F`, `%3F` `?`, `%23` `#`), any encoded `%` (`%25`: a server
/// that decodes twice, or three times, reads what follows as another escape), and overlong or
/// invalid UTF-8 lead bytes that old servers decode to `.` or `/` (`%C0`, `%C1`, `%E0` before
/// `%80`-`%9F`, `%F0` before `%80`-`%8F`, `%F5`-`%FF`).
fn ambiguous_escape(path: &str, i: usize) -> Option<&'static str> {
    let byte = |j: usize| escaped_byte(path, j);
    let v = byte(i)?;
    let next = byte(i + 3);
    match v {
        b'/' | b'\\' => Some("an encoded / or \\ (%2F, %5C)"),
        0x00..=0x1f | 0x7f => Some("an encoded control character (%00-%1F, %7F)"),
        b'?' | b'#' => Some("an encoded ? or # (%3F, %23), where a server may cut the path"),
        b'%' => {
            Some("an encoded % (%25), which a server that decodes twice reads as another escape")
        }
        0xc0 | 0xc1 | 0xf5..=0xff => Some("an invalid UTF-8 byte (%C0, %C1, %F5-%FF)"),
        0xe0 if next.is_some_and(|n| (0x80..=0x9f).contains(&n)) => {
            Some("an overlong UTF-8 sequence (%E0%80-%E0%9F)")
        }
        0xf0 if next.is_some_and(|n| (0x80..=0x8f).contains(&n)) => {
            Some("an overlong UTF-8 sequence (%F0%80-%F0%8F)")
        }
        0xc2..=0xf4 => lookalike(path, i),
        _ => None,
    }
}

/// The byte the escape at `path[j]` (`%` and two hex digits) stands for, if there is one.
fn escaped_byte(path: &str, j: usize) -> Option<u8> {
    path.get(j..j + 3)
        .filter(|e| e.starts_with('%'))
        .and_then(|e| u8::from_str_radix(&e[1..], 16).ok())
}

/// Why the character encoded by the escapes at `path[i]` is one a server normalizing Unicode
/// (NFKC) or mapping to a Windows code page reads as (or as holding) `.`, `/` or `\\`, if it is.
/// The NFKC list is every code point whose compatibility form holds one of the three (checked
/// against Python's `unicodedata` over all of Unicode): `‥` is `..`, `℅` is `c/o`, `⒈` is `1.`.
fn lookalike(path: &str, i: usize) -> Option<&'static str> {
    let mut bytes = [0u8; 4];
    let mut n = 0;
    while let Some(b) = (n < 4).then(|| escaped_byte(path, i + 3 * n)).flatten() {
        bytes[n] = b;
        n += 1;
    }
    let c = (2..=n)
        .find_map(|len| std::str::from_utf8(&bytes[..len]).ok())?
        .chars()
        .next()?;
    match c {
        '\u{a5}' => Some("an encoded \u{a5} (%C2%A5), which Japanese Windows servers read as \\"),
        '\u{20a9}' => {
            Some("an encoded \u{20a9} (%E2%82%A9), which Korean Windows servers read as \\")
        }
        '\u{2024}'..='\u{2026}'
        | '\u{2100}'..='\u{2101}'
        | '\u{2105}'..='\u{2106}'
        | '\u{2488}'..='\u{249b}'
        | '\u{33c2}'
        | '\u{33c7}'
        | '\u{33d8}'
        | '\u{fe19}'
        | '\u{fe30}'
        | '\u{fe52}'
        | '\u{fe68}'
        | '\u{ff0e}'
        | '\u{ff0f}'
        | '\u{ff3c}'
        | '\u{1f100}' => Some(
            "an encoded character that servers normalizing Unicode (NFKC) read as holding . / or \\ \
             (such as the full-width \u{ff0e} \u{ff0f} \u{ff3c}, or \u{2025} for ..)",
        ),
        '\u{fe6a}' | '\u{ff05}' => Some(
            "an encoded character that servers normalizing Unicode (NFKC) read as % (the \
             full-width \u{ff05} or the small \u{fe6a}), which a server that decodes twice \
             then reads as an escape, as it would %25",
        ),
        _ => None,
    }
}

/// Whether a path segment is one a browser or server may resolve as `.` or `..`: only dots
/// once `%2e` is decoded and `;parameters` dropped (Java servers, also from `%3B`), or dots
/// and spaces only (Windows servers drop trailing dots and spaces: `. .`, `.. ` and `...`).
fn dot_segment(seg: &str) -> bool {
    let decoded = seg.to_ascii_lowercase();
    let decoded = crate::replace_str(&decoded, "%2e", ".");
    let decoded = crate::replace_str(&decoded, "%3b", ";");
    let decoded = crate::replace_str(&decoded, "%20", " ");
    let name = decoded.split(';').next().unwrap_or("");
    name.as_bytes().contains(&b'.') && name.bytes().all(|c| c == b'.' || c == b' ')
}

/// `'` in the query as `%27`: browsers send it so (it is in the query percent-encode set of
/// http and https), and a URL is checked as it is sent.
fn encode_query_quotes(path: &str) -> String {
    match path.split_once('?') {
        Some((p, q)) if q.as_bytes().contains(&b'\'') => {
            format!("{p}?{}", crate::replace_str(q, "'", "%27"))
        }
        _ => path.to_owned(),
    }
}

/// Splits `host[:port]` from the rest at the first `/`, `?` or `#`.
fn split_authority(rest: &str) -> (&str, &str) {
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    rest.split_at(end)
}

fn check_chars(s: &str) -> Result<(), UrlError> {
    if s.len() > MAX_URL_BYTES {
        return bad(format!("it is longer than {MAX_URL_BYTES} bytes"));
    }
    if let Some(c) = s
        .chars()
        .find(|c| !c.is_ascii() || c.is_ascii_control() || *c == ' ')
    {
        return bad(format!(
            "it holds {c:?}: write URLs in printable ASCII, percent-encoding the rest"
        ));
    }
    if s.as_bytes().contains(&b'\\') {
        return bad("it holds a backslash");
    }
    Ok(())
}

impl Url {
    /// Parses an absolute `http://` or `https://` URL strictly.
    pub fn parse(s: &str) -> Result<Url, UrlError> {
        check_chars(s)?;
        let Some((scheme, rest)) = Scheme::strip(s) else {
            return bad("only absolute http:// and https:// URLs can be fetched");
        };
        let (authority, rest) = split_authority(rest);
        if authority.as_bytes().contains(&b'@') {
            return bad("a user name or password in the URL (user@host) is not allowed");
        }
        let (host, port) = match authority.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        };
        let host = check_host(host)?;
        let port = match port {
            Some(p) => check_port(p)?,
            None => scheme.default_port(),
        };
        // The fragment is never sent.
        let rest = rest.split('#').next().unwrap_or("");
        let path = if rest.starts_with('/') {
            rest.to_owned()
        } else {
            format!("/{rest}")
        };
        check_path(&path, false)?;
        let path = encode_query_quotes(&path);
        Ok(Url {
            scheme,
            host,
            port,
            path,
        })
    }

    /// The canonical form the host fetches: `scheme://host[:port]/path?query` (the port only
    /// when it is not the scheme's default, as browsers write it).
    pub fn href(&self) -> String {
        if self.port == self.scheme.default_port() {
            format!("{}://{}{}", self.scheme.as_str(), self.host, self.path)
        } else {
            format!(
                "{}://{}:{}{}",
                self.scheme.as_str(),
                self.host,
                self.port,
                self.path
            )
        }
    }

    /// `scheme://host:port`, for messages.
    pub fn origin(&self) -> String {
        format!("{}://{}:{}", self.scheme.as_str(), self.host, self.port)
    }
}

/// The host part of a pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostPattern {
    /// This host only.
    Exact(String),
    /// `*.example.com`: any subdomain of this host (not the host itself).
    Subdomains(String),
}

/// One allowlist entry: `scheme://host[:port|:*]/path-glob`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    /// The scheme.
    pub scheme: Scheme,
    /// The host.
    pub host: HostPattern,
    /// The port, or `None` for `:*` (any).
    pub port: Option<u16>,
    /// The path (and query) glob: `*` matches any characters, the rest is literal; the path
    /// and the query are matched apart (see [`Pattern::matches`]).
    pub path: String,
}

/// Matches `text` against a glob where `*` matches any run of characters.
pub fn glob_match(glob: &str, text: &str) -> bool {
    let (g, t) = (glob.as_bytes(), text.as_bytes());
    let (mut gi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if gi < g.len() && g[gi] == b'*' {
            star = Some((gi, ti));
            gi += 1;
        } else if gi < g.len() && g[gi] == t[ti] {
            gi += 1;
            ti += 1;
        } else if let Some((sg, st)) = star {
            gi = sg + 1;
            ti = st + 1;
            star = Some((sg, st + 1));
        } else {
            return false;
        }
    }
    g[gi..].iter().all(|&c| c == b'*')
}

impl Pattern {
    /// Parses `http://127.0.0.1:*/api/*`, `https://*.example.com/v1/*`, ….
    pub fn parse(s: &str) -> Result<Pattern, UrlError> {
        let why = |e: UrlError| UrlError(format!("the pattern {s:?}: {e}"));
        check_chars(s).map_err(why)?;
        let Some((scheme, rest)) = Scheme::strip(s) else {
            return Err(why(UrlError(
                "it must start with http:// or https://".into(),
            )));
        };
        let (authority, path) = split_authority(rest);
        if authority.as_bytes().contains(&b'@') {
            return Err(why(UrlError("it names a user (user@host)".into())));
        }
        let (host, port) = match authority.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        };
        let host = match host.strip_prefix("*.") {
            Some(h) if !h.as_bytes().contains(&b'.') => {
                return Err(why(UrlError(format!(
                    "*.{h} names every host under a top-level domain; name a domain, e.g. *.example.com"
                ))))
            }
            Some(h) => HostPattern::Subdomains(check_host(h).map_err(why)?),
            None => HostPattern::Exact(check_host(host).map_err(why)?),
        };
        let port = match port {
            Some("*") => None,
            Some(p) => Some(check_port(p).map_err(why)?),
            None => Some(scheme.default_port()),
        };
        if !path.starts_with('/') {
            return Err(why(UrlError(
                "it needs a path, e.g. /* for every path or /api/* for those under /api/".into(),
            )));
        }
        if path.as_bytes().contains(&b'#') {
            return Err(why(UrlError("it has a fragment (#)".into())));
        }
        check_path(path, true).map_err(why)?;
        Ok(Pattern {
            scheme,
            host,
            port,
            path: encode_query_quotes(path),
        })
    }

    /// Whether `url` is allowed by this pattern.
    pub fn matches(&self, url: &Url) -> bool {
        let host_ok = match &self.host {
            HostPattern::Exact(h) => *h == url.host,
            HostPattern::Subdomains(h) => url
                .host
                .strip_suffix(h.as_str())
                .is_some_and(|sub| sub.len() > 1 && sub.ends_with('.')),
        };
        self.scheme == url.scheme
            && host_ok
            && self.port.is_none_or(|p| p == url.port)
            && self.path_matches(&url.path)
    }

    /// The path and the query are matched apart, so that literal text after a `*` limits
    /// the path (`/*.json` does not match `/x?f=.json`). A pattern with a query (`?…`) matches
    /// URLs with a matching query; one without matches URLs with no query, or any query when
    /// its path ends in `*` (`/api/*` matches `/api/x?y=1`).
    ///
    /// The path must match both as sent and as a Java server reads it, with each segment's
    /// `;parameters` dropped from the path and the pattern alike: `/*.json` does not match
    /// `/admin;.json` (read as `/admin`), nor `/*.json;v=1` match `/admin;.json;v=1`.
    fn path_matches(&self, url_path: &str) -> bool {
        let (pat_path, pat_query) = split_query(&self.path);
        let (path, query) = split_query(url_path);
        glob_match(pat_path, path)
            && glob_match(&without_params(pat_path), &without_params(path))
            && match (pat_query, query) {
                (Some(pq), Some(q)) => query_matches(pq, q),
                (Some(_), None) => false,
                (None, None) => true,
                (None, Some(_)) => pat_path.ends_with('*'),
            }
    }
}

/// A path with each segment's `;parameters` dropped (`/a;x=1/b;c` → `/a/b`), also where the
/// `;` is encoded (`%3B`: Jetty and others decode it before cutting).
fn without_params(path: &str) -> String {
    path.split('/')
        .map(|seg| {
            let cut = [";", "%3b", "%3B"]
                .iter()
                .filter_map(|p| crate::find_str(seg, p))
                .min()
                .unwrap_or(seg.len());
            &seg[..cut]
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// Whether a URL's query matches a pattern's. A `*` stands for part of one parameter and never
/// spans a `&`, except a `*` that is the whole query pattern or follows its last `&` (any
/// further parameters): `q=*&lang=en` does not match `q=x&lang=de&z=&lang=en`. A parameter the
/// pattern names may not be named again (after decoding), not even among the further ones:
/// servers differ on which of the two they read. A `;` in the query is refused, as older
/// parsers split parameters on it too (`q=x;lang=de&lang=en`).
fn query_matches(pattern: &str, query: &str) -> bool {
    if pattern == "*" {
        return true;
    }
    if query.as_bytes().contains(&b';') {
        return false;
    }
    let (head, any_more) = match pattern.strip_suffix("&*") {
        Some(h) => (h, true),
        None => (pattern, false),
    };
    let params: Vec<&str> = query.split('&').collect();
    let fixed = head.split('&').count();
    if params.len() < fixed || (!any_more && params.len() > fixed) {
        return false;
    }
    let pats = head.split('&');
    if !pats.zip(&params).all(|(p, q)| glob_match(p, q)) {
        return false;
    }
    let names: Vec<ServerNames> = params
        .iter()
        .map(|p| server_names(p.split('=').next().unwrap_or("")))
        .collect();
    (0..fixed).all(|i| {
        names
            .iter()
            .enumerate()
            .all(|(j, other)| j == i || !names[i].same_as(other))
    })
}

/// The names servers may read for one query parameter (see [`server_names`]).
struct ServerNames {
    /// Readings of the whole name.
    whole: Vec<String>,
    /// Readings of the name cut at `[` (PHP's array parameters: `id[]` and `id[a]` are `id`).
    array: Vec<String>,
}

impl ServerNames {
    /// Whether some server reads both as one parameter: the same whole name, or one an array
    /// element of the other (`id` and `id[]`). Two elements of one array (`f[a]`, `f[b]`) are
    /// different keys.
    fn same_as(&self, other: &ServerNames) -> bool {
        let meets = |a: &[String], b: &[String]| a.iter().any(|n| b.contains(n));
        meets(&self.whole, &other.whole)
            || meets(&self.array, &other.whole)
            || meets(&self.whole, &other.array)
    }

    fn any(&self, name: &str) -> bool {
        self.whole.iter().chain(&self.array).any(|n| n == name)
    }
}

/// The names servers may read for a query parameter named `raw` as the URL writes it: `+` as
/// a space, then percent-decoded and lower-cased (ASP.NET compares names without case), cut at
/// a NUL (PHP's names are C strings), whole or cut at `[` (PHP reads `id[]` as `id`), and each
/// of those also as PHP spells it, `.`, ` ` and `[` read as `_`, with leading spaces kept and
/// dropped (PHP drops them; another reader may not).
fn server_names(raw: &str) -> ServerNames {
    let decoded = percent_decode_lossy(&crate::replace_str(raw, "+", " ")).to_ascii_lowercase();
    let plain = decoded.split('\0').next().unwrap_or("");
    let php = |s: &str| -> String {
        s.chars()
            .map(|c| if matches!(c, '.' | ' ' | '[') { '_' } else { c })
            .collect()
    };
    let readings = |base: &str| -> Vec<String> {
        let mut out = Vec::new();
        for s in [base, base.trim_start_matches(' ')] {
            out.push(s.to_owned());
            out.push(php(s));
        }
        crate::order::sort(&mut out);
        out.dedup();
        out
    };
    let mut array = match plain.split_once('[') {
        Some((base, _)) => readings(base),
        None => Vec::new(),
    };
    // Rack (`\A[\[\]]*([^\[\]]+)\]*`) and qs also read `lang]`, `]lang`, `[lang` and `[lang]`
    // as `lang`: brackets in front dropped, the name cut at the first bracket after.
    let rack = plain.trim_start_matches(['[', ']']);
    let rack = rack.split(['[', ']']).next().unwrap_or("");
    if rack != plain && !rack.is_empty() {
        array.extend(readings(rack));
        crate::order::sort(&mut array);
        array.dedup();
    }
    ServerNames {
        whole: readings(plain),
        array,
    }
}

/// `%XX` escapes decoded (bytes that are not UTF-8 become U+FFFD), for comparing names.
fn percent_decode_lossy(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = s
            .get(i + 1..i + 3)
            .filter(|_| b[i] == b'%')
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match hex {
            Some(v) => {
                out.push(v);
                i += 3;
            }
            None => {
                out.push(b[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `path?query` as the path and the query (`None`: no `?`).
fn split_query(s: &str) -> (&str, Option<&str>) {
    match s.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (s, None),
    }
}

/// The methods a den may be allowed to use (the browser refuses `CONNECT`, `TRACE`, `TRACK`).
pub const METHODS: &[&str] = &["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

/// Request headers a den may not set: the browser controls them (it would drop them silently,
/// or refuse the request).
const FORBIDDEN_HEADERS: &[&str] = &[
    "accept-charset",
    "accept-encoding",
    "access-control-request-headers",
    "access-control-request-method",
    "connection",
    "content-length",
    "cookie",
    "cookie2",
    "date",
    "dnt",
    "expect",
    "host",
    "keep-alive",
    "origin",
    "referer",
    "set-cookie",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "via",
];

/// Headers that servers read as the request's real method (past `network.methods`) or as who
/// sent it: refused.
const MISLEADING_HEADERS: &[&str] = &[
    "x-http-method-override",
    "x-http-method",
    "x-method-override",
    "x-original-method",
    "forwarded",
    "x-forwarded",
    // Read by some servers and proxies as the real path or host (IIS URL Rewrite, old Symfony).
    "x-original-url",
    "x-original-uri",
    "x-rewrite-url",
    "x-original-host",
    "x-host",
    "x-http-host-override",
    // Read as the client's address.
    "x-real-ip",
    "true-client-ip",
    "x-client-ip",
    "client-ip",
    "x-cluster-client-ip",
    "cf-connecting-ip",
    "fastly-client-ip",
    "x-originating-ip",
    "x-remote-addr",
    "x-remote-ip",
];

/// Why the network options were refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetConfigError {
    /// The option: `network.allow`, `network.methods`, ….
    pub option: &'static str,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for NetConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.option, self.message)
    }
}

/// A den's network options, validated (`openDen({ network })`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetworkConfig {
    /// The allowlist (at least one pattern).
    pub allow: Vec<Pattern>,
    /// The allowed methods, upper case.
    pub methods: Vec<&'static str>,
    /// Requests made per sliding minute.
    pub per_minute: u32,
    /// Cap on each answer's body.
    pub max_response_bytes: u64,
}

/// The methods of `network.methods`, upper case, each once; `None` means `["GET"]`.
pub fn parse_methods(methods: Option<&[String]>) -> Result<Vec<&'static str>, NetConfigError> {
    let err = |message: String| NetConfigError {
        option: "network.methods",
        message,
    };
    match methods {
        None => Ok(vec!["GET"]),
        Some([]) => Err(err("list at least one method, e.g. [\"GET\"]".into())),
        Some(list) => {
            let mut out = Vec::new();
            for m in list {
                let up = m.to_ascii_uppercase();
                let Some(known) = METHODS.iter().find(|k| **k == up) else {
                    return Err(err(format!("{m:?} is not one of {}", METHODS.join(", "))));
                };
                if !out.contains(known) {
                    out.push(*known);
                }
            }
            Ok(out)
        }
    }
}

impl NetworkConfig {
    /// Validates the options. `methods: None` means `["GET"]`.
    pub fn new(
        allow: &[String],
        methods: Option<&[String]>,
        per_minute: u64,
        max_response_bytes: u64,
    ) -> Result<Self, NetConfigError> {
        let err = |option, message: String| NetConfigError { option, message };
        if allow.is_empty() {
            return Err(err(
                "network.allow",
                "list at least one URL pattern, e.g. \"https://api.example.com/v1/*\"".into(),
            ));
        }
        if allow.len() > MAX_PATTERNS {
            return Err(err(
                "network.allow",
                format!("at most {MAX_PATTERNS} patterns"),
            ));
        }
        let allow = allow
            .iter()
            .map(|p| Pattern::parse(p).map_err(|e| err("network.allow", e.0)))
            .collect::<Result<Vec<_>, _>>()?;
        let methods = parse_methods(methods)?;
        if !(1..=MAX_PER_MINUTE).contains(&per_minute) {
            return Err(err(
                "network.perMinute",
                format!("must be a whole number from 1 to {MAX_PER_MINUTE}"),
            ));
        }
        if max_response_bytes > MAX_RESPONSE_BYTES {
            return Err(err(
                "network.maxResponseBytes",
                format!("must be a whole number from 0 to {MAX_RESPONSE_BYTES} (bytes)"),
            ));
        }
        Ok(NetworkConfig {
            allow,
            methods,
            per_minute: per_minute as u32,
            max_response_bytes,
        })
    }
}

/// Requests made in the last minute, oldest first.
#[derive(Debug, Clone, Default)]
pub struct RateWindow {
    made: Vec<f64>,
}

impl RateWindow {
    /// Admits one request at `now_ms` if fewer than `per_minute` were made in the minute
    /// before; else the ms until one leaves the window.
    pub fn admit(&mut self, now_ms: f64, per_minute: u32) -> Result<(), f64> {
        // Those that left the window go (a Vec, not a VecDeque: less code in the wasm module).
        let gone = (self.made.iter())
            .take_while(|&&t| now_ms - t >= 60_000.0)
            .count();
        self.made.drain(..gone);
        if self.made.len() >= per_minute as usize {
            let oldest = self.made.first().copied().unwrap_or(now_ms);
            return Err((oldest + 60_000.0 - now_ms).max(0.0));
        }
        self.made.push(now_ms);
        Ok(())
    }
}

/// Why a request was refused, or did not complete (`refusedBecause`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The den has no `network` option.
    NetworkOff,
    /// The URL is not an absolute http(s) URL foxden accepts.
    BadUrl,
    /// No allowlist pattern matches the URL.
    NotAllowed,
    /// The method is not in `network.methods`.
    Method,
    /// `network.perMinute` requests were already made in the last minute.
    Rate,
    /// The headers or body are malformed or over their caps.
    BadRequest,
    /// The server answered with a redirect (not followed).
    Redirect,
    /// The answer was longer than `network.maxResponseBytes` (cut, not delivered).
    TooLarge,
    /// The browser could not make the request (network error, CORS).
    Failed,
    /// The run ended (timeout, reset, close) before the answer came.
    Aborted,
}

impl Refusal {
    /// Every reason.
    pub const ALL: &'static [Refusal] = &[
        Self::NetworkOff,
        Self::BadUrl,
        Self::NotAllowed,
        Self::Method,
        Self::Rate,
        Self::BadRequest,
        Self::Redirect,
        Self::TooLarge,
        Self::Failed,
        Self::Aborted,
    ];

    /// The `refusedBecause` value.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::NetworkOff => "network-off",
            Self::BadUrl => "bad-url",
            Self::NotAllowed => "not-allowed",
            Self::Method => "method",
            Self::Rate => "rate",
            Self::BadRequest => "bad-request",
            Self::Redirect => "redirect",
            Self::TooLarge => "too-large",
            Self::Failed => "failed",
            Self::Aborted => "aborted",
        }
    }
}

/// A refusal with its message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// The reason.
    pub reason: Refusal,
    /// A sentence for Python's exception and the record.
    pub message: String,
}

impl Refused {
    /// A refusal for `reason` saying `message`.
    pub fn new(reason: Refusal, message: impl Into<String>) -> Self {
        Refused {
            reason,
            message: message.into(),
        }
    }
}

/// A request as the den asked for it (read from its message, bounded).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The URL as written.
    pub url: String,
    /// The method as written.
    pub method: String,
    /// Header names and values.
    pub headers: Vec<(String, String)>,
    /// Body length in bytes (the bytes stay in JS).
    pub body_len: usize,
}

/// A request the host may make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    /// The URL; the host fetches `url.href()`.
    pub url: Url,
    /// The method, upper case.
    pub method: &'static str,
    /// The headers, names lower case.
    pub headers: Vec<(String, String)>,
}

/// A query parameter that servers read as the request's method (`_method`: Laravel, Symfony,
/// Rails, Express's method-override), named as the URL writes it. Names are read as
/// [`server_names`] has it (`_method%00x`, `+_method`, `_method[]` and `_METHOD` are all
/// `_method` to some server); `;` separates parameters too, as older parsers have it.
fn method_override(path_and_query: &str) -> Option<String> {
    let (_, query) = split_query(path_and_query);
    query?.split(['&', ';']).find_map(|param| {
        let name = param.split('=').next().unwrap_or("");
        server_names(name).any("_method").then(|| name.to_owned())
    })
}

fn check_headers(headers: &[(String, String)]) -> Result<Vec<(String, String)>, String> {
    if headers.len() > MAX_HEADERS {
        return Err(format!("more than {MAX_HEADERS} headers"));
    }
    let total: usize = headers.iter().map(|(n, v)| n.len() + v.len()).sum();
    if total > MAX_HEADER_BYTES {
        return Err(format!(
            "the headers hold more than {MAX_HEADER_BYTES} bytes"
        ));
    }
    let token = |c: u8| c.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&c);
    let mut out = Vec::with_capacity(headers.len());
    for (name, value) in headers {
        if name.is_empty() || !name.bytes().all(token) {
            return Err(format!("{name:?} is not a header name"));
        }
        let lower = name.to_ascii_lowercase();
        // CGI, PHP, WSGI and some proxies read `_` as `-` (`X_Forwarded_For` is
        // `HTTP_X_FORWARDED_FOR`): the lists are checked against that reading too.
        let read = crate::replace_str(&lower, "_", "-");
        if FORBIDDEN_HEADERS.contains(&read.as_str())
            || read.starts_with("proxy-")
            || read.starts_with("sec-")
        {
            return Err(format!(
                "the header {name:?} is set by the browser, not by the den"
            ));
        }
        if MISLEADING_HEADERS.contains(&read.as_str()) || read.starts_with("x-forwarded-") {
            return Err(format!(
                "the header {name:?} could make a server act on another method, path, host or client than the den's request names; it is refused"
            ));
        }
        if value.bytes().any(|c| c == b'\r' || c == b'\n' || c == 0) || !value.is_ascii() {
            return Err(format!(
                "the value of {name:?} holds a line break, NUL or non-ASCII character"
            ));
        }
        out.push((lower, value.trim().to_owned()));
    }
    Ok(out)
}

/// The most query parameters (split at `&` or `;`) a URL foxden fetches may have.
pub const MAX_QUERY_PARAMS: usize = 256;

/// A den's broker: its options (or none: network off) and its sliding minute of requests.
#[derive(Debug, Clone, Default)]
pub struct Broker {
    /// The options; `None`: network off.
    pub config: Option<NetworkConfig>,
    rate: RateWindow,
}

impl Broker {
    /// A broker for these options.
    pub fn new(config: Option<NetworkConfig>) -> Self {
        Broker {
            config,
            rate: RateWindow::default(),
        }
    }

    /// Decides one request at `now_ms`: in order, network on, URL, allowlist, method, headers
    /// and body, rate. Only an allowed request takes a slot of the minute.
    pub fn check(&mut self, req: &Request, now_ms: f64) -> Result<Checked, Refused> {
        let Some(cfg) = &self.config else {
            return Err(Refused::new(
                Refusal::NetworkOff,
                "this den has no network: open it with openDen({ network: { allow: [...] } }) \
                 (or the network attribute) to let foxden.fetch reach listed URLs",
            ));
        };
        let url = Url::parse(&req.url).map_err(|e| {
            Refused::new(
                Refusal::BadUrl,
                format!("{:?} is not a URL foxden fetches: {e}", clip(&req.url)),
            )
        })?;
        // Each parameter costs the checks below (and servers' parsers) work: a URL of the
        // 8 KiB allowed could otherwise carry thousands.
        let params = split_query(&url.path).1.map_or(0, |q| {
            q.bytes().filter(|&b| b == b'&' || b == b';').count() + 1
        });
        if params > MAX_QUERY_PARAMS {
            return Err(Refused::new(
                Refusal::BadUrl,
                format!("the URL's query has {params} parameters, over the {MAX_QUERY_PARAMS} foxden fetches"),
            ));
        }
        if !cfg.allow.iter().any(|p| p.matches(&url)) {
            return Err(Refused::new(
                Refusal::NotAllowed,
                format!(
                    "{} is not in the den's network allowlist",
                    clip(&url.href())
                ),
            ));
        }
        if let Some(name) = method_override(&url.path) {
            return Err(Refused::new(
                Refusal::BadRequest,
                format!(
                    "the query parameter {:?} is read by some servers as the request's method (past network.methods); it is refused",
                    clip(&name)
                ),
            ));
        }
        let up = req.method.to_ascii_uppercase();
        let Some(method) = cfg.methods.iter().find(|m| **m == up).copied() else {
            return Err(Refused::new(
                Refusal::Method,
                format!(
                    "the method {:?} is not allowed (network.methods: {})",
                    clip(&req.method),
                    cfg.methods.join(", ")
                ),
            ));
        };
        let headers =
            check_headers(&req.headers).map_err(|e| Refused::new(Refusal::BadRequest, e))?;
        if req.body_len > MAX_BODY_BYTES {
            return Err(Refused::new(
                Refusal::BadRequest,
                format!(
                    "the body is {} bytes, over the cap of {MAX_BODY_BYTES}",
                    req.body_len
                ),
            ));
        }
        if req.body_len > 0 && (method == "GET" || method == "HEAD") {
            return Err(Refused::new(
                Refusal::BadRequest,
                format!("a {method} request cannot have a body"),
            ));
        }
        if let Err(wait) = self.rate.admit(now_ms, cfg.per_minute) {
            // Tenths of a second in integers: float formatting is heavy in the wasm module.
            let tenths = (wait / 100.0).round() as u64;
            return Err(Refused::new(
                Refusal::Rate,
                format!(
                    "{} requests were made in the last minute (network.perMinute); the next one is possible in {}.{} s",
                    cfg.per_minute,
                    tenths / 10,
                    tenths % 10
                ),
            ));
        }
        Ok(Checked {
            url,
            method,
            headers,
        })
    }

    /// The cap on an answer's body.
    pub fn max_response_bytes(&self) -> u64 {
        self.config.as_ref().map_or(0, |c| c.max_response_bytes)
    }
}

fn clip(s: &str) -> String {
    let mut s = s.to_owned();
    crate::protocol::clip(&mut s, 200);
    s
}

/// Counts an answer's bytes as they stream in, and refuses past the cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResponseCap {
    /// The cap.
    pub max: u64,
    /// Bytes so far.
    pub used: u64,
}

impl ResponseCap {
    /// A cap of `max` bytes.
    pub fn new(max: u64) -> Self {
        ResponseCap { max, used: 0 }
    }

    fn too_large(&self, what: String) -> Refused {
        Refused::new(
            Refusal::TooLarge,
            format!(
                "the answer is larger than network.maxResponseBytes ({} bytes): {what}; it was cut and not delivered",
                self.max
            ),
        )
    }

    /// Checks a `Content-Length` the server announced, before reading.
    pub fn announced(&self, len: Option<u64>) -> Result<(), Refused> {
        match len {
            Some(n) if n > self.max => {
                Err(self.too_large(format!("the server announced {n} bytes")))
            }
            _ => Ok(()),
        }
    }

    /// Adds a chunk; refuses once the total passes the cap.
    pub fn add(&mut self, len: u64) -> Result<(), Refused> {
        self.used = self.used.saturating_add(len);
        if self.used > self.max {
            return Err(self.too_large(format!("{} bytes read so far", self.used)));
        }
        Ok(())
    }
}

/// One request of a run, as `run.requests` and the `request` event report it.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestRecord {
    /// The URL fetched (canonical), or as the den wrote it (clipped) when it was not a URL.
    pub url: String,
    /// The method (upper case).
    pub method: String,
    /// The HTTP status, when an answer came.
    pub status: Option<u16>,
    /// Why it was refused or did not complete, or `None`.
    pub refused: Option<Refusal>,
    /// The message of the refusal, or empty.
    pub message: String,
    /// Answer bytes delivered.
    pub bytes: u64,
    /// Time from the request to its end (ms).
    pub duration_ms: f64,
}

impl RequestRecord {
    /// The record of a refused request.
    pub fn refused(req: &Request, r: &Refused) -> Self {
        let url = Url::parse(&req.url).map_or_else(|_| clip(&req.url), |u| u.href());
        let mut method = req.method.to_ascii_uppercase();
        crate::protocol::clip(&mut method, 16);
        RequestRecord {
            url,
            method,
            status: None,
            refused: Some(r.reason),
            message: r.message.clone(),
            bytes: 0,
            duration_ms: 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Result<String, String> {
        Url::parse(s).map(|u| u.href()).map_err(|e| e.0)
    }

    #[test]
    fn urls_are_normalized() {
        assert_eq!(
            url("HTTP://Example.COM/a/b?x=1#frag"),
            Ok("http://example.com/a/b?x=1".into())
        );
        assert_eq!(url("https://a.b:443"), Ok("https://a.b/".into()));
        assert_eq!(url("http://a.b:080/x"), Ok("http://a.b/x".into()));
        assert_eq!(
            url("http://127.0.0.1:8123/api/x"),
            Ok("http://127.0.0.1:8123/api/x".into())
        );
        assert_eq!(url("http://a.b?q"), Ok("http://a.b/?q".into()));
        let u = Url::parse("https://xn--bcher-kva.example/").unwrap();
        assert_eq!((u.port, u.scheme), (443, Scheme::Https));
        assert_eq!(u.origin(), "https://xn--bcher-kva.example:443");
    }

    #[test]
    fn tricky_urls_are_refused() {
        for (s, why) in [
            ("ftp://a.b/", "only absolute http"),
            ("javascript:alert(1)", "only absolute http"),
            ("//a.b/x", "only absolute http"),
            ("/api/x", "only absolute http"),
            ("http:/a.b/x", "only absolute http"),
            ("http:///a.b/x", "no host"),
            ("http://user:pw@a.b/", "user name"),
            ("http://127.0.0.1@evil.com/", "user name"),
            ("http://a.b\\@evil.com/", "backslash"),
            ("http://evil.com\\127.0.0.1/", "backslash"),
            ("http://a.b/x y", "' '"),
            (" http://a.b/", "' '"),
            ("http://a.b/\tx", "'\\t'"),
            ("http://exämple.com/", "printable ASCII"),
            ("http://2130706433/", "dotted IPv4"),
            ("http://0x7f.0.0.1/", "dotted IPv4"),
            ("http://0177.0.0.1/", "dotted IPv4"),
            ("http://127.1/", "dotted IPv4"),
            ("http://256.0.0.1/", "dotted IPv4"),
            ("http://a.b.0x10/", "dotted IPv4"),
            ("http://[::1]/", "IPv6"),
            ("http://a.b./", "ends with a dot"),
            ("http://a..b/", "empty or over-long label"),
            ("http://a_b.c/", "character other than"),
            ("http://-a.b/", "starting or ending"),
            ("http://a%2eb/", "character other than"),
            ("http://a.b:0/", "port"),
            ("http://a.b:65536/", "port"),
            ("http://a.b:/", "port"),
            ("http://a.b:8080:1/", "port"),
            ("http://a.b:+80/", "port"),
            ("http://a.b/api/../admin", ". or .."),
            ("http://a.b/api/%2e%2e/admin", ". or .."),
            ("http://a.b/api/%2E./admin", ". or .."),
            ("http://a.b/api/./x", ". or .."),
            ("http://a.b/api/..", ". or .."),
            ("http://a.b/api%2f..%2fadmin", "encoded /"),
            ("http://a.b/api%5Cx", "encoded /"),
            ("http://a.b/public/..;/admin", ". or .."),
            ("http://a.b/public/%2e%2e;/admin", ". or .."),
            ("http://a.b/public/..;jsessionid=x/admin", ". or .."),
            ("http://a.b/public/.;/x", ". or .."),
            ("http://a.b/public/%252e%252e/admin", "encoded % (%25)"),
            ("http://a.b/public/%252F/admin", "encoded % (%25)"),
            ("http://a.b/public/x%255cy", "encoded % (%25)"),
            ("http://a.b/public/%25252e%25252e/admin", "encoded % (%25)"),
            ("http://a.b/public/..%00/admin", "control character"),
            ("http://a.b/public/.%00/admin", "control character"),
            ("http://a.b/public/..%09/admin", "control character"),
            ("http://a.b/public/x%7f", "control character"),
            ("http://a.b/admin%3F.json", "encoded ? or #"),
            ("http://a.b/admin%23.json", "encoded ? or #"),
            ("http://a.b/public/%c0%ae%c0%ae/admin", "invalid UTF-8"),
            (
                "http://a.b/api/%EF%BC%8E%EF%BC%8E%EF%BC%8F/admin",
                "full-width",
            ),
            ("http://a.b/api/..%ef%bc%bcadmin", "full-width"),
            ("http://a.b/api/%E2%80%A4%E2%80%A4/admin", "NFKC"),
            ("http://a.b/api/%E2%80%A5/admin", "NFKC"),
            ("http://a.b/api/%ef%b9%92%ef%b9%92/admin", "NFKC"),
            ("http://a.b/api/%EF%B8%99/admin", "NFKC"),
            ("http://a.b/api/%EF%B8%B0/admin", "NFKC"),
            ("http://a.b/api/x%E2%84%85admin", "NFKC"),
            ("http://a.b/api/..%EF%B9%A8admin", "NFKC"),
            ("http://a.b/api/%E2%92%88", "NFKC"),
            ("http://a.b/api/%F0%9F%84%80", "NFKC"),
            ("http://a.b/api/%C2%A5..%C2%A5admin", "Japanese"),
            ("http://a.b/api/%E2%82%A9x", "Korean"),
            ("http://a.b/public/%C1%9C", "invalid UTF-8"),
            ("http://a.b/public/%ff", "invalid UTF-8"),
            ("http://a.b/public/%e0%80%ae%e0%80%ae/admin", "overlong"),
            ("http://a.b/public/%f0%80%80%ae", "overlong"),
            ("http://a.b/public/..%3b/admin", ". or .."),
            ("http://a.b/public/..%20/admin", ". or .."),
            ("http://a.b/public/.../admin", ". or .."),
            // Windows drops trailing dots and spaces: these are `..` (or `.`) to it.
            ("http://a.b/public/.%20./admin", ". or .."),
            ("http://a.b/public/..%20./admin", ". or .."),
            ("http://a.b/public/.%20/admin", ". or .."),
            ("http://a.b/public/%2e%2e%2e;x/admin", ". or .."),
            ("http://a.b/%zz", "two hex digits"),
            ("http://a.b/%2", "two hex digits"),
            ("http://a.b/<script>", "'<'"),
            ("http://a.b/x\"y", "'\"'"),
            ("http://a.b/`", "'`'"),
            ("http://a.b/{x}", "'{'"),
            ("http://a.b/^", "'^'"),
        ] {
            let e = url(s).expect_err(s);
            assert!(e.contains(why), "{s}: {e}");
        }
        assert!(url(&format!("http://a.b/{}", "x".repeat(MAX_URL_BYTES))).is_err());
        assert!(url(&format!("http://{}.b/", "x".repeat(64))).is_err());
        // Other encoded characters are fine, up to the lookalikes' neighbours.
        for s in [
            "http://a.b/caf%C3%A9",
            "http://a.b/%E2%80%A3%E2%80%A7",
            "http://a.b/%EF%BC%8D%EF%B9%91",
            "http://a.b/%F0%9F%84%81%F0%9F%98%80",
            "http://a.b/%C2%A4",
        ] {
            assert!(url(s).is_ok(), "{s}");
        }
        // Dots inside segments are fine; a query may say `..` and hold encoded slashes.
        assert!(url("http://a.b/v1.2/file..txt?p=../x").is_ok());
        // Ordinary escapes stay allowed: UTF-8 (é, 中), spaces, and anything in the query.
        assert!(url("http://a.b/caf%C3%A9/%E4%B8%AD/a%20b/..x").is_ok());
        assert!(url("http://a.b/x?q=%00%25%3F%23%c0").is_ok());
        assert_eq!(
            url("http://a.b/r?to=http%3A%2F%2Fc.d%2Fe&x=%5C"),
            Ok("http://a.b/r?to=http%3A%2F%2Fc.d%2Fe&x=%5C".into())
        );
    }

    fn pat(s: &str) -> Pattern {
        Pattern::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn allowed(p: &str, u: &str) -> bool {
        pat(p).matches(&Url::parse(u).unwrap_or_else(|e| panic!("{u}: {e}")))
    }

    #[test]
    fn a_listed_parameter_named_again_with_brackets_is_refused() {
        // Rack 2 reads `lang]`, `]lang`, `[lang`, `[lang]` as `lang` (the last one wins); qs
        // (Express 4) reads `[lang]` as `lang`: each would change the pinned value.
        let p = "https://a.b/search?q=*&lang=en&*";
        assert!(!allowed(p, "https://a.b/search?q=x&lang=en&lang=de"));
        for q in ["lang%5D=de", "%5Dlang=de", "%5Blang=de", "%5Blang%5D=de"] {
            let u = format!("https://a.b/search?q=x&lang=en&{q}");
            assert!(!allowed(p, &u), "{u} is allowed");
        }
        // Other names, and two elements of one array, are still different keys.
        assert!(allowed(p, "https://a.b/search?q=x&lang=en&page=2"));
        assert!(allowed(
            p,
            "https://a.b/search?q=x&lang=en&f%5Ba%5D=1&f%5Bb%5D=2"
        ));
    }

    #[test]
    fn characters_that_nfkc_reads_as_percent_are_refused_like_percent_25() {
        assert!(url("https://a.com/public/%252e%252e/admin").is_err());
        for u in [
            "https://a.com/public/%EF%BC%852e%EF%BC%852e/admin",
            "https://a.com/public/%EF%B9%AA2e%EF%B9%AA2e/admin",
        ] {
            let e = url(u).unwrap_err();
            assert!(e.contains("read as %"), "{e}");
        }
    }

    #[test]
    fn patterns_match_scheme_host_port_and_path() {
        let p = "http://127.0.0.1:*/api/*";
        assert!(allowed(p, "http://127.0.0.1:8123/api/data.json"));
        assert!(allowed(p, "http://127.0.0.1/api/"));
        assert!(allowed(p, "http://127.0.0.1:9/api/a/b?c=d"));
        assert!(!allowed(p, "http://127.0.0.1:8123/apix"));
        assert!(!allowed(p, "http://127.0.0.1:8123/api"));
        assert!(!allowed(p, "https://127.0.0.1:8123/api/x"));
        assert!(!allowed(p, "http://127.0.0.1.evil.com/api/x"));
        assert!(!allowed(p, "http://127.0.0.2/api/x"));
        let p = "https://api.example.com/v1/*";
        assert!(allowed(p, "https://API.example.com:443/v1/users"));
        assert!(!allowed(p, "https://api.example.com:8443/v1/users"));
        assert!(!allowed(p, "https://api.example.com.evil.com/v1/users"));
        assert!(!allowed(p, "https://evilapi.example.com/v1/users"));
        assert!(!allowed(p, "https://api.example.com/v2/users"));
        assert!(!allowed(p, "http://api.example.com/v1/users"));
        let p = "https://*.example.com/*";
        assert!(allowed(p, "https://a.example.com/x"));
        assert!(allowed(p, "https://a.b.example.com/"));
        assert!(!allowed(p, "https://example.com/x"));
        assert!(!allowed(p, "https://aexample.com/x"));
        assert!(!allowed(p, "https://example.com.evil/x"));
        // No star: the exact path only (a query is part of it).
        let p = "https://a.b/data.json";
        assert!(allowed(p, "https://a.b/data.json"));
        assert!(!allowed(p, "https://a.b/data.json?x=1"));
        // Literal text after a star limits the path: the query is matched apart.
        let p = "https://a.b/*.json";
        assert!(allowed(p, "https://a.b/x/y.json"));
        assert!(!allowed(p, "https://a.b/admin?f=.json"));
        assert!(!allowed(p, "https://a.b/admin?.json"));
        assert!(!allowed(p, "https://a.b/y.json?x=1"));
        assert!(allowed("https://a.b/*.json?*", "https://a.b/y.json?x=1"));
        assert!(allowed("https://a.b/*.json?*", "https://a.b/y.json?"));
        assert!(!allowed("https://a.b/*.json?*", "https://a.b/y.json"));
        let p = "https://a.b/search?q=*&lang=en";
        assert!(allowed(p, "https://a.b/search?q=cats&lang=en"));
        assert!(!allowed(p, "https://a.b/search/x?q=cats&lang=en"));
        assert!(!allowed(p, "https://a.b/search?q=cats&lang=de"));
        // A query's ' is checked as browsers send it (%27), in the URL and in the pattern.
        assert_eq!(
            Url::parse("https://a.b/x'y?q='1'").map(|u| u.href()),
            Ok("https://a.b/x'y?q=%271%27".to_owned())
        );
        assert!(allowed("https://a.b/s?q=%27*", "https://a.b/s?q='x'"));
        assert!(allowed("https://a.b/s?q='*", "https://a.b/s?q=%27x"));
        assert!(!allowed("https://a.b/s?q=x'", "https://a.b/s?q=x"));
        assert!(allowed("http://a.b:8080/*", "http://a.b:8080/"));
        assert!(!allowed("http://a.b:8080/*", "http://a.b/"));
        assert!(allowed("http://a.b/x/*/z", "http://a.b/x/y/w/z"));
        // The path matches both as sent and without `;parameters` (as Java servers read it).
        assert!(!allowed("https://a.b/*.json", "https://a.b/admin;.json"));
        assert!(!allowed("https://a.b/*.json", "https://a.b/admin%3b.json"));
        assert!(!allowed("https://a.b/*.json", "https://a.b/admin%3B.json"));
        assert!(allowed("https://a.b/*.json", "https://a.b/data%20set.json"));
        assert!(!allowed("https://a.b/*.json", "https://a.b/admin;x=.json"));
        assert!(allowed("https://a.b/*.json", "https://a.b/x;v=1/y.json"));
        // A pattern's own `;parameters` do not switch that off: both are read the Java way.
        assert!(allowed(
            "https://a.b/a;v=1/*.json",
            "https://a.b/a;v=1/x.json"
        ));
        assert!(!allowed(
            "https://a.b/a;v=1/*.json",
            "https://a.b/a;v=1/x;.json"
        ));
        assert!(!allowed(
            "https://a.b/*.json;v=1",
            "https://a.b/admin;.json;v=1"
        ));
        // A pinned query parameter may not be named again as any server reads names: PHP (a
        // NUL ends a name, `id[]` is `id`, leading spaces dropped, `.` and ` ` are `_`), and
        // ASP.NET (names compared without case).
        // Each query names its first (pinned) parameter again.
        for q in [
            "id=7&id%00=8",
            "id=7&id%5B%5D=8",
            "id=7&+id=8",
            "id=7&ID=8",
            "id=7&Id%00x=8",
            "a_b=7&a.b=8",
            "a_b=7&a%20b=8",
            "a_b=7&a+b=8",
            "a_b=7&a%5Bb=8",
        ] {
            let pinned = q.split('=').next().unwrap_or("");
            let pattern = format!("https://a.b/s?{pinned}=*&*");
            assert!(!allowed(&pattern, &format!("https://a.b/s?{q}")), "{q}");
        }
        assert!(allowed(
            "https://a.b/s?id=*&*",
            "https://a.b/s?id=7&idx=8&uid=9"
        ));
        // Two keys of one PHP array are two parameters (JSON:API's filter[a], Rails' user[name]).
        let p = "https://a.b/s?filter%5Ba%5D=*&filter%5Bb%5D=*";
        assert!(allowed(p, "https://a.b/s?filter%5Ba%5D=1&filter%5Bb%5D=2"));
        let p = "https://a.b/s?user%5Bname%5D=*&*";
        assert!(allowed(
            p,
            "https://a.b/s?user%5Bname%5D=x&user%5Bemail%5D=y"
        ));
        assert!(!allowed(p, "https://a.b/s?user%5Bname%5D=x&user=y"));
        assert!(!allowed(
            "https://a.b/s?user=*&*",
            "https://a.b/s?user=x&user%5Bname%5D=y"
        ));
        assert!(allowed(
            "https://a.b/api/*",
            "https://a.b/api/x;jsessionid=1"
        ));
        assert!(allowed("https://a.b/a;v=1/*", "https://a.b/a;v=1/x"));
        // A query `*` stays inside one parameter; a trailing `&*` allows further ones.
        let p = "https://a.b/search?q=*&lang=en";
        assert!(!allowed(p, "https://a.b/search?q=x&lang=de&z=&lang=en"));
        assert!(!allowed(
            p,
            "https://a.b/search?q=x&admin=1&debug=true&lang=en"
        ));
        assert!(!allowed(p, "https://a.b/search?q=x&lang=en&lang=de"));
        assert!(!allowed(p, "https://a.b/search?q=x&lang=en&"));
        assert!(allowed(p, "https://a.b/search?q=a%26b&lang=en"));
        let p = "https://a.b/s?id=*";
        assert!(allowed(p, "https://a.b/s?id=7"));
        assert!(!allowed(p, "https://a.b/s?id=7&id=8"));
        assert!(!allowed(p, "https://a.b/s?id=7&%69d=8"));
        let p = "https://a.b/s?id=*&*";
        assert!(allowed(p, "https://a.b/s?id=7&page=2&x"));
        assert!(allowed(p, "https://a.b/s?id=7"));
        assert!(!allowed(p, "https://a.b/s?page=2&id=7"));
        // A named parameter stays one value, also past `&*`; further ones may repeat.
        assert!(!allowed(p, "https://a.b/s?id=7&id=8"));
        assert!(!allowed(p, "https://a.b/s?id=7&page=2&i%64=8"));
        assert!(allowed(p, "https://a.b/s?id=7&tag=a&tag=b"));
        // Older parsers split on `;` too.
        let p = "https://a.b/search?q=*&lang=en";
        assert!(!allowed(p, "https://a.b/search?q=x;lang=de&lang=en"));
        assert!(allowed("https://a.b/s?*", "https://a.b/s?a=1&a=2"));
        assert!(allowed("https://a.b/s?*", "https://a.b/s?a=1;b=2"));
    }

    #[test]
    fn bad_patterns_are_refused() {
        for (s, why) in [
            ("api.example.com/*", "http:// or https://"),
            ("ws://a.b/*", "http:// or https://"),
            ("https://a.b", "needs a path"),
            ("https://a.b?x", "needs a path"),
            ("https://*/x", "character other than"),
            ("https://*.*.b/x", "character other than"),
            ("https://a*.b/x", "character other than"),
            ("https://u@a.b/*", "user"),
            ("https://a.b/*#x", "fragment"),
            ("https://a.b:99999/*", "port"),
            ("https://a.b/../*", ". or .."),
            ("https://*.com/*", "top-level domain"),
            ("https://*.localhost/*", "top-level domain"),
            ("https://a.b/x%00/*", "control character"),
        ] {
            let e = Pattern::parse(s).expect_err(s).0;
            assert!(e.contains(why), "{s}: {e}");
            assert!(e.contains(&format!("{s:?}")), "{e}");
        }
    }

    #[test]
    fn globs() {
        assert!(glob_match("*", ""));
        assert!(glob_match("/a/*", "/a/"));
        assert!(glob_match("/a*b*c", "/aXbYbZc"));
        assert!(!glob_match("/a*b*c", "/aXbYbZ"));
        assert!(glob_match("**", "x"));
        assert!(!glob_match("/a", "/ab"));
        assert!(glob_match(&"*a".repeat(20), &"a".repeat(40)));
        assert!(!glob_match(&"*a".repeat(20), &"a".repeat(19)));
    }

    fn config(allow: &[&str], methods: Option<&[&str]>, per_minute: u64) -> NetworkConfig {
        let allow: Vec<String> = allow.iter().map(|s| s.to_string()).collect();
        let methods: Option<Vec<String>> =
            methods.map(|m| m.iter().map(|s| s.to_string()).collect());
        NetworkConfig::new(&allow, methods.as_deref(), per_minute, 100).unwrap()
    }

    fn req(url: &str, method: &str) -> Request {
        Request {
            url: url.into(),
            method: method.into(),
            headers: vec![],
            body_len: 0,
        }
    }

    #[test]
    fn config_is_validated() {
        let e = |allow: &[&str], methods: Option<&[&str]>, pm: u64, max: u64| {
            let allow: Vec<String> = allow.iter().map(|s| s.to_string()).collect();
            let methods: Option<Vec<String>> =
                methods.map(|m| m.iter().map(|s| s.to_string()).collect());
            NetworkConfig::new(&allow, methods.as_deref(), pm, max)
                .unwrap_err()
                .option
        };
        assert_eq!(e(&[], None, 5, 1), "network.allow");
        assert_eq!(e(&["nope"], None, 5, 1), "network.allow");
        assert_eq!(e(&["http://a.b/*"], Some(&[]), 5, 1), "network.methods");
        assert_eq!(
            e(&["http://a.b/*"], Some(&["CONNECT"]), 5, 1),
            "network.methods"
        );
        assert_eq!(e(&["http://a.b/*"], None, 0, 1), "network.perMinute");
        assert_eq!(
            e(&["http://a.b/*"], None, MAX_PER_MINUTE + 1, 1),
            "network.perMinute"
        );
        assert_eq!(
            e(&["http://a.b/*"], None, 5, MAX_RESPONSE_BYTES + 1),
            "network.maxResponseBytes"
        );
        let many: Vec<&str> = vec!["http://a.b/*"; MAX_PATTERNS + 1];
        assert_eq!(e(&many, None, 5, 1), "network.allow");
        let c = config(&["http://a.b/*"], Some(&["get", "Post", "GET"]), 5);
        assert_eq!(c.methods, ["GET", "POST"]);
        assert_eq!(config(&["http://a.b/*"], None, 5).methods, ["GET"]);
    }

    #[test]
    fn broker_decides_in_order() {
        let mut off = Broker::new(None);
        let r = off.check(&req("http://a.b/x", "GET"), 0.0).unwrap_err();
        assert_eq!(r.reason, Refusal::NetworkOff);
        assert!(r.message.contains("openDen({ network"), "{}", r.message);

        let mut b = Broker::new(Some(config(
            &["http://a.b/api/*"],
            Some(&["GET", "POST"]),
            3,
        )));
        let reason =
            |b: &mut Broker, r: Request| b.check(&r, 0.0).map(|_| ()).map_err(|e| e.reason);
        assert_eq!(
            reason(&mut b, req("file:///etc/passwd", "GET")),
            Err(Refusal::BadUrl)
        );
        assert_eq!(
            reason(&mut b, req("http://a.b/other", "GET")),
            Err(Refusal::NotAllowed)
        );
        assert_eq!(
            reason(&mut b, req("http://a.b/api/x", "DELETE")),
            Err(Refusal::Method)
        );
        let mut h = req("http://a.b/api/x", "GET");
        h.headers = vec![("Cookie".into(), "a=b".into())];
        assert_eq!(reason(&mut b, h.clone()), Err(Refusal::BadRequest));
        h.headers = vec![("X-Ok".into(), "a\r\nHost: evil".into())];
        assert_eq!(reason(&mut b, h.clone()), Err(Refusal::BadRequest));
        h.headers = vec![("Sec-Fetch-Site".into(), "none".into())];
        assert_eq!(reason(&mut b, h.clone()), Err(Refusal::BadRequest));
        // A method override would get past network.methods on servers that honour it.
        for name in [
            "X-HTTP-Method-Override",
            "x-http-method",
            "X-Method-Override",
            "Forwarded",
            "X-Forwarded-For",
            "X-Forwarded",
            "X-Original-Method",
            "X-Original-URL",
            "x-rewrite-url",
            "X-Original-Host",
            "X-Real-IP",
            "True-Client-IP",
            "Client-IP",
            "CF-Connecting-IP",
            "Fastly-Client-IP",
            "X-Originating-IP",
            "X-Remote-Addr",
            // Servers that read `_` as `-` (CGI, PHP, WSGI) see these as the refused ones.
            "X_Forwarded_For",
            "X_HTTP_Method_Override",
            "Proxy_Authorization",
            "sec_fetch_site",
            "X-Real_IP",
        ] {
            h.headers = vec![(name.into(), "DELETE".into())];
            assert_eq!(
                reason(&mut b, h.clone()),
                Err(Refusal::BadRequest),
                "{name}"
            );
        }
        h.headers = vec![("X_Custom_Thing".into(), "ok".into())];
        let mut other = Broker::new(Some(config(&["http://a.b/api/*"], None, 100)));
        assert_eq!(reason(&mut other, h.clone()), Ok(()));
        h.headers = vec![];
        // So would a `_method` query parameter (compared as PHP reads names).
        let mut m = Broker::new(Some(config(&["http://a.b/api/*"], Some(&["POST"]), 100)));
        for q in [
            "_method=DELETE",
            "a=1&_METHOD=PUT",
            "%5Fmethod=x",
            ".method=x",
            "%20method",
            "%5Bmethod=x",
            // A form decoder reads `+` as a space, PHP drops leading spaces, and older
            // parsers split on `;` too.
            "+_method=DELETE",
            "%20_method=DELETE",
            "a=1;_method=PUT",
            // PHP cuts a name at a NUL and reads `_method[]` as `_method`.
            "_method%00=DELETE",
            "_method%00x=DELETE",
            "_method%5B%5D=DELETE",
        ] {
            let r = req(&format!("http://a.b/api/x?{q}"), "POST");
            assert_eq!(reason(&mut m, r), Err(Refusal::BadRequest), "{q}");
        }
        let r = req("http://a.b/api/x?my_method=1&method=2", "POST");
        assert_eq!(reason(&mut m, r), Ok(()));
        // At most MAX_QUERY_PARAMS parameters (each costs the checks work).
        let q = vec!["a=1"; MAX_QUERY_PARAMS].join("&");
        let r = req(&format!("http://a.b/api/x?{q}"), "POST");
        assert_eq!(reason(&mut m, r), Ok(()));
        let r = req(&format!("http://a.b/api/x?{q}&+"), "POST");
        assert_eq!(reason(&mut m, r), Err(Refusal::BadUrl));
        h.headers = vec![("bad name".into(), "x".into())];
        assert_eq!(reason(&mut b, h.clone()), Err(Refusal::BadRequest));
        h.headers = vec![("x".into(), "y".into()); MAX_HEADERS + 1];
        assert_eq!(reason(&mut b, h.clone()), Err(Refusal::BadRequest));
        let mut body = req("http://a.b/api/x", "GET");
        body.body_len = 1;
        assert_eq!(reason(&mut b, body.clone()), Err(Refusal::BadRequest));
        body.method = "POST".into();
        body.body_len = MAX_BODY_BYTES + 1;
        assert_eq!(reason(&mut b, body.clone()), Err(Refusal::BadRequest));
        // None of the refusals took a slot of the minute: three requests pass, the fourth not.
        let mut ok = req("http://a.b/api/x", "post");
        ok.headers = vec![("Content-Type".into(), " application/json ".into())];
        ok.body_len = 10;
        let c = b.check(&ok, 0.0).unwrap();
        assert_eq!(
            (c.method, c.url.href().as_str()),
            ("POST", "http://a.b/api/x")
        );
        assert_eq!(
            c.headers,
            [("content-type".to_string(), "application/json".to_string())]
        );
        assert!(b.check(&req("http://a.b/api/y", "GET"), 1.0).is_ok());
        assert!(b.check(&req("http://a.b/api/z", "GET"), 2.0).is_ok());
        let r = b
            .check(&req("http://a.b/api/w", "GET"), 30_000.0)
            .unwrap_err();
        assert_eq!(r.reason, Refusal::Rate);
        assert!(
            r.message.contains("next one is possible in 30.0 s"),
            "{}",
            r.message
        );
        assert!(b.check(&req("http://a.b/api/w", "GET"), 60_000.0).is_ok());
    }

    #[test]
    fn rate_is_a_sliding_minute() {
        let mut w = RateWindow::default();
        for t in 0..5 {
            assert!(w.admit(t as f64 * 1000.0, 5).is_ok());
        }
        assert_eq!(w.admit(10_000.0, 5), Err(50_000.0));
        assert!(w.admit(59_999.0, 5).is_err());
        assert!(w.admit(60_000.0, 5).is_ok()); // the first left the window
        assert!(w.admit(60_500.0, 5).is_err());
        assert!(w.admit(61_000.0, 5).is_ok());
    }

    #[test]
    fn response_cap() {
        let mut c = ResponseCap::new(10);
        assert!(c.announced(Some(10)).is_ok());
        assert!(c.announced(None).is_ok());
        let e = c.announced(Some(11)).unwrap_err();
        assert_eq!(e.reason, Refusal::TooLarge);
        assert!(
            e.message.contains("maxResponseBytes (10 bytes)"),
            "{}",
            e.message
        );
        assert!(c.add(6).is_ok());
        assert!(c.add(4).is_ok());
        let e = c.add(1).unwrap_err();
        assert!(e.message.contains("11 bytes read so far"), "{}", e.message);
        assert!(ResponseCap::new(0).add(1).is_err());
        assert!(ResponseCap::new(0).add(0).is_ok());
    }

    proptest::proptest! {
        /// Whatever the text, the parser does not panic, and what it accepts is a fixed point
        /// whose canonical form has no user info, backslash, fragment or dot segment.
        #[test]
        fn parse_is_a_fixed_point(s in "(?i)(https?://)?[a-z0-9.@:%/\\\\?#*&=+\\-_~ \\[\\]]{0,40}") {
            if let Ok(u) = Url::parse(&s) {
                let href = u.href();
                proptest::prop_assert_eq!(Url::parse(&href), Ok(u.clone()));
                let authority = href.split('/').nth(2).unwrap_or("");
                proptest::prop_assert!(!authority.contains('@'));
                proptest::prop_assert!(!href.contains('\\') && !href.contains('#') && !href.contains(' '));
                let path = u.path.split('?').next().unwrap_or("");
                proptest::prop_assert!(!path.split('/').any(|seg| seg == ".." || seg == "."));
            }
            let _ = Pattern::parse(&s);
        }
    }

    #[test]
    fn records_and_reasons() {
        let r = RequestRecord::refused(
            &req("HTTP://A.B/x#f", "get"),
            &Refused::new(Refusal::NotAllowed, "no"),
        );
        assert_eq!((r.url.as_str(), r.method.as_str()), ("http://a.b/x", "GET"));
        assert_eq!(r.refused, Some(Refusal::NotAllowed));
        let long = RequestRecord::refused(
            &req(&"x".repeat(5000), &"m".repeat(100)),
            &Refused::new(Refusal::BadUrl, "no"),
        );
        assert_eq!((long.url.len(), long.method.len()), (200, 16));
        let mut names: Vec<&str> = Refusal::ALL.iter().map(|r| r.as_str()).collect();
        names.dedup();
        assert_eq!(names.len(), Refusal::ALL.len());
    }
}
