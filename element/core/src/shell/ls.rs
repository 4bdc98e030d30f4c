//! `ls [-1aA] [NAME]...`: one name per line (output is never a terminal), sorted by
//! bytes (what GNU ls does in C.UTF-8), file operands first, then each folder.

use super::fs::{Fs, Node};
use super::getopt::getopt;
use super::quote::quoteaf;
use super::{getopt_error, Command, Io};

/// Options of `ls`.
pub(super) struct Opts {
    /// `None`: hide names starting with `.`; `Some(true)`: `-a`; `Some(false)`: `-A`.
    all: Option<bool>,
    operands: Vec<String>,
}

const SUPPORTED: &str = "-1, -a, -A";

pub(super) fn prepare(args: &[String]) -> Result<Command, String> {
    let p = match getopt(args, &[('1', false), ('a', false), ('A', false)], false) {
        Ok(p) => p,
        Err(e) => return getopt_error("ls", e, SUPPORTED),
    };
    let mut all = None;
    for (c, _) in p.opts {
        match c {
            'a' => all = Some(true),
            'A' => all = Some(false),
            _ => {}
        }
    }
    Ok(Command::Ls(Opts {
        all,
        operands: p.operands,
    }))
}

/// How many bytes of the read bound one byte of a folder's listing counts for (measured: a
/// listing took about 16 times as long per byte as `cat` of a file).
const LISTING_WORK: usize = 16;

pub(super) fn run(o: &Opts, fs: &Fs, io: &mut Io) -> i32 {
    let dot = [".".to_owned()];
    let operands: &[String] = if o.operands.is_empty() {
        &dot
    } else {
        &o.operands
    };
    let mut status = 0;
    let mut files: Vec<&String> = Vec::new();
    let mut dirs: Vec<(&String, String)> = Vec::new();
    for name in operands {
        match fs.resolve(name) {
            Ok(Node::File(_)) => files.push(name),
            Ok(Node::Dir(path)) => dirs.push((name, path)),
            Err(e) => {
                io.err(&format!(
                    "ls: cannot access {}: {}\n",
                    quoteaf(name),
                    e.message()
                ));
                status = 2;
            }
        }
    }
    crate::order::sort(&mut files);
    crate::order::sort_by(&mut dirs, &|a, b| a.0.cmp(b.0));
    for f in &files {
        io.out(f.as_bytes());
        io.out(b"\n");
    }
    let print_names = !(o.operands.len() <= 1 && files.is_empty() && dirs.len() == 1);
    if !files.is_empty() && !dirs.is_empty() {
        io.out(b"\n");
    }
    let mut first = true;
    for (name, path) in dirs {
        // Listing more folders would show nothing more (each listing copies its entries).
        if io.out_closed() {
            break;
        }
        if print_names {
            if !first {
                io.out(b"\n");
            }
            first = false;
            io.out(name.as_bytes());
            io.out(b":\n");
        }
        let mut entries: Vec<String> = fs
            .list(&path)
            .into_iter()
            .filter(|e| o.all.is_some() || !e.starts_with('.'))
            .collect();
        if o.all == Some(true) {
            entries.push(".".into());
            entries.push("..".into());
            crate::order::sort(&mut entries);
        }
        // A listing costs more than its bytes (each entry is copied, filtered and sorted):
        // it counts LISTING_WORK times against the command line's read bound.
        let bytes = entries
            .iter()
            .fold(0usize, |n, e| n.saturating_add(e.len() + 1));
        io.spend(bytes.saturating_mul(LISTING_WORK));
        for e in entries {
            io.out(e.as_bytes());
            io.out(b"\n");
        }
    }
    status
}
