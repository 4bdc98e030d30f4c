//! `cat [FILE]...`: concatenates files; `-` (or no operand) is standard input.

use super::fs::{Errno, Fs, Node};
use super::getopt::getopt;
use super::quote::quotef;
use super::{getopt_error, Command, Io};

pub(super) fn prepare(args: &[String]) -> Result<Command, String> {
    match getopt(args, &[], false) {
        Ok(p) => Ok(Command::Cat(p.operands)),
        Err(e) => getopt_error("cat", e, "none"),
    }
}

pub(super) fn run(operands: &[String], fs: &Fs, io: &mut Io) -> i32 {
    let stdin = ["-".to_owned()];
    let operands = if operands.is_empty() {
        &stdin[..]
    } else {
        operands
    };
    let mut status = 0;
    for name in operands {
        if name == "-" {
            let rope = io.take_stdin();
            for s in rope.segs() {
                io.out_seg(s.clone());
            }
            continue;
        }
        let err = match fs.resolve(name) {
            Ok(Node::File(data)) => {
                if !data.is_empty() {
                    io.out_seg(super::stream::Seg::whole(data));
                }
                continue;
            }
            Ok(Node::Dir(_)) => Errno::IsDir,
            Err(e) => e,
        };
        io.err(&format!("cat: {}: {}\n", quotef(name), err.message()));
        status = 1;
    }
    status
}
