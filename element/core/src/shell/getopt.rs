//! GNU `getopt` argument order for the options den.sh supports: options may come after
//! operands, `--` ends options, `-` alone is an operand, short options cluster (`-ivc`),
//! and an option's value is the rest of its word or the next word (`-n5`, `-n 5`).

/// A parsed option or operand list.
pub(super) struct Parsed {
    /// Options in order, with their values.
    pub(super) opts: Vec<(char, Option<String>)>,
    /// Operands in order.
    pub(super) operands: Vec<String>,
}

/// Why parsing stopped.
pub(super) enum GetoptError {
    /// An option den.sh does not support (shown as given, e.g. `-x` or `--count`).
    Unsupported(String),
    /// A supported option needing a value was last (GNU: "option requires an argument").
    MissingValue(char),
    /// A character GNU accepts only in special positions (head's `-5` after other
    /// arguments: "invalid trailing option").
    Trailing(char),
}

/// Parses `args` with `spec`: each supported short option and whether it takes a value.
/// `digits_trailing`: GNU head accepts digit options but rejects them after argv[1].
pub(super) fn getopt(
    args: &[String],
    spec: &[(char, bool)],
    digits_trailing: bool,
) -> Result<Parsed, GetoptError> {
    match getopt_partial(args, spec, digits_trailing) {
        (p, None) => Ok(p),
        (_, Some(e)) => Err(e),
    }
}

/// As [`getopt`], but also returns what was parsed before an error, for a command that acts
/// on each option as GNU's getopt loop meets it (head dies on a bad `-n` before it sees a
/// bad option further on).
pub(super) fn getopt_partial(
    args: &[String],
    spec: &[(char, bool)],
    digits_trailing: bool,
) -> (Parsed, Option<GetoptError>) {
    let mut opts = Vec::new();
    let mut operands = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if a == "--" {
            operands.extend(args[i..].iter().cloned());
            break;
        }
        if a.starts_with("--") {
            let name = a.split('=').next().unwrap_or(a);
            return (
                Parsed { opts, operands },
                Some(GetoptError::Unsupported(name.to_owned())),
            );
        }
        if !a.starts_with('-') || a == "-" {
            operands.push(a.clone());
            continue;
        }
        let cluster: Vec<char> = a.chars().skip(1).collect();
        let mut j = 0;
        while j < cluster.len() {
            let c = cluster[j];
            j += 1;
            match spec.iter().find(|(o, _)| *o == c) {
                Some((_, false)) => opts.push((c, None)),
                Some((_, true)) => {
                    let value: String = if j < cluster.len() {
                        cluster[j..].iter().collect()
                    } else if i < args.len() {
                        i += 1;
                        args[i - 1].clone()
                    } else {
                        return (
                            Parsed { opts, operands },
                            Some(GetoptError::MissingValue(c)),
                        );
                    };
                    opts.push((c, Some(value)));
                    break;
                }
                None => {
                    let e = if digits_trailing && c.is_ascii_digit() {
                        GetoptError::Trailing(c)
                    } else {
                        GetoptError::Unsupported(format!("-{c}"))
                    };
                    return (Parsed { opts, operands }, Some(e));
                }
            }
        }
    }
    (Parsed { opts, operands }, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn permutes_and_clusters() {
        let spec = [('i', false), ('n', true)];
        let Ok(p) = getopt(
            &v(&["a", "-in5", "b", "-n", "-3", "--", "-i", "-"]),
            &spec,
            false,
        ) else {
            panic!("parse failed")
        };
        assert_eq!(
            p.opts,
            vec![
                ('i', None),
                ('n', Some("5".into())),
                ('n', Some("-3".into()))
            ]
        );
        assert_eq!(p.operands, v(&["a", "b", "-i", "-"]));
        assert!(
            matches!(getopt(&v(&["-x"]), &spec, false), Err(GetoptError::Unsupported(s)) if s == "-x")
        );
        assert!(
            matches!(getopt(&v(&["--count=3"]), &spec, false), Err(GetoptError::Unsupported(s)) if s == "--count")
        );
        assert!(matches!(
            getopt(&v(&["-n"]), &spec, false),
            Err(GetoptError::MissingValue('n'))
        ));
        assert!(matches!(
            getopt(&v(&["-3"]), &spec, true),
            Err(GetoptError::Trailing('3'))
        ));
    }
}
