//! Every message of the three hops, described once: host ↔ den page (window messages), den page ↔
//! worker (the worker's global channel: what worker.js posts is keyed, see [`Channel::Keyed`]).
//!
//! For each message: its `t` tag, the channel it travels on, when it is sent, and each field
//! with its type. The tags of host ↔ den page messages are the [`HostToDen`] and [`DenToHost`]
//! enums' own (`as_str`), so the host's parser and this table cannot drift apart.
//!
//! Two texts are generated from this table and checked by native tests (`cargo test -p
//! foxden-core`; `FOXDEN_BLESS=1 cargo test -p foxden-core protocol` rewrites both):
//! - `den-page/protocol.d.ts` ([`typescript`]): one TypeScript type per message and one union per
//!   hop, which `den.js` and `worker.js` use in their JSDoc (`tsc -p den-page/tsconfig.json`,
//!   `cargo xtask` runs it);
//! - the message table of `docs/architecture.md` ([`markdown`]).
//!
//! A den page and a worker are hostile to the side that reads them: a type here says what an
//! honest sender posts, not what a reader may assume. Readers still check every field.

use super::{DenToHost, ErrorKind, HostToDen, Stream, PROTOCOL_VERSION};
use crate::codes::LoadStage;
use crate::net::Refusal;

/// The type of a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    /// A string.
    Str,
    /// A number.
    Num,
    /// `true` or `false`.
    Bool,
    /// A `Uint8Array`.
    Bytes,
    /// An `ArrayBuffer`.
    Buffer,
    /// An `Int32Array` (over a `SharedArrayBuffer`).
    Int32Array,
    /// A `MessagePort`.
    Port,
    /// A compiled `WebAssembly.Module`.
    WasmModule,
    /// A `ReadableStream` of `Uint8Array` chunks.
    Stream,
    /// Exactly this string.
    Lit(&'static str),
    /// One of these strings.
    OneOf(&'static [&'static str]),
    /// A list.
    List(&'static Ty),
    /// `null` or a value of this type.
    OrNull(&'static Ty),
    /// An object of a named shape.
    Shape(&'static Shape),
}

/// One field of a message or shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// The property name.
    pub name: &'static str,
    /// Its type.
    pub ty: Ty,
    /// The property may be absent.
    pub optional: bool,
    /// Its buffer is transferred, not copied.
    pub transferred: bool,
    /// What it is.
    pub doc: &'static str,
}

/// A named object type used inside messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// The TypeScript name.
    pub name: &'static str,
    /// What it is.
    pub doc: &'static str,
    /// Its fields.
    pub fields: &'static [Field],
}

/// Where a message travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Channel {
    /// `window.postMessage` from the host page to the iframe, before the den page connected.
    Window,
    /// Window messages between the host page and the iframe, after `connect`: the den page
    /// reads only its parent's, the host only its iframe's (`event.source`).
    Connected,
    /// The worker's global channel (`worker.postMessage`; worker.js reads trusted events only).
    WorkerGlobal,
    /// The worker's global channel, posted by worker.js as `[key, message]` with the boot
    /// message's `key`; the den page reads nothing else from it (user code posts there too).
    Keyed,
}

impl Channel {
    fn describe(self) -> &'static str {
        match self {
            Channel::Window => "window.postMessage, once",
            Channel::Connected => "window.postMessage (source checked)",
            Channel::WorkerGlobal => "the worker's global channel",
            Channel::Keyed => "the worker's global channel, as `[key, message]`",
        }
    }
}

/// One message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Message {
    /// The suffix of its TypeScript name (`HostToDen` + `Boot`).
    pub name: &'static str,
    /// The `t` field, or `None` for the one message without it (`connect`).
    pub t: Option<&'static str>,
    /// Where it travels.
    pub channel: Channel,
    /// When it is sent.
    pub when: &'static str,
    /// Its fields other than `t`.
    pub fields: &'static [Field],
}

/// All messages from one context to another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hop {
    /// The TypeScript name of the union of its messages.
    pub name: &'static str,
    /// `from → to` as the docs table says it.
    pub route: &'static str,
    /// Its messages.
    pub messages: &'static [Message],
}

impl Hop {
    /// The message with this `t`.
    pub fn message(&self, t: &str) -> Option<&'static Message> {
        self.messages.iter().find(|m| m.t == Some(t))
    }
}

const fn f(name: &'static str, ty: Ty, doc: &'static str) -> Field {
    Field {
        name,
        ty,
        optional: false,
        transferred: false,
        doc,
    }
}

const fn opt(name: &'static str, ty: Ty, doc: &'static str) -> Field {
    Field {
        optional: true,
        ..f(name, ty, doc)
    }
}

const fn moved(name: &'static str, ty: Ty, doc: &'static str) -> Field {
    Field {
        transferred: true,
        ..f(name, ty, doc)
    }
}

const fn run_id(doc: &'static str) -> Field {
    f("id", Ty::Num, doc)
}

const STREAMS: [&str; 2] = [Stream::ALL[0].as_str(), Stream::ALL[1].as_str()];
const ERROR_KINDS: [&str; 5] = [
    ErrorKind::ALL[0].as_str(),
    ErrorKind::ALL[1].as_str(),
    ErrorKind::ALL[2].as_str(),
    ErrorKind::ALL[3].as_str(),
    ErrorKind::ALL[4].as_str(),
];
/// The languages a run's code can be in.
pub const LANGS: [&str; 2] = ["python", "javascript"];
/// How an interpreter booted.
const BOOTED_FROM: [&str; 2] = ["scratch", "snapshot"];
/// The `DenLoadError` stages a den page itself reports (a subset of [`LoadStage`]).
pub const DEN_PAGE_STAGES: [&str; 6] = [
    LoadStage::Isolation.as_str(),
    LoadStage::Message.as_str(),
    LoadStage::Wasm.as_str(),
    LoadStage::Pyodide.as_str(),
    LoadStage::Package.as_str(),
    LoadStage::Den.as_str(),
];

/// A wheel the host fetched (or was handed) and checked against its SHA-256 pin.
pub const WHEEL: Shape = Shape {
    name: "Wheel",
    doc: "A pure-Python wheel to install, checked by the host against its SHA-256 pin.",
    fields: &[
        f(
            "file",
            Ty::Str,
            "The wheel's file name (`name-version-py3-none-any.whl`).",
        ),
        f(
            "data",
            Ty::Bytes,
            "The wheel's bytes (copied, not transferred: kept for restarts).",
        ),
    ],
};

/// `run.error`.
pub const RUN_ERROR: Shape = Shape {
    name: "RunError",
    doc: "Why a run failed (`run.error` of the API).",
    fields: &[
        f("kind", Ty::OneOf(&ERROR_KINDS), "What kind of failure."),
        f(
            "type",
            Ty::Str,
            "The exception or error type name (at most 256 bytes).",
        ),
        f("message", Ty::Str, "The message."),
        f(
            "traceback",
            Ty::Str,
            "The Python traceback, or the JavaScript stack, or empty.",
        ),
    ],
};

/// A file the host sends with a run.
pub const PUT_FILE: Shape = Shape {
    name: "PutFile",
    doc: "A file the worker lacks, sent with a run.",
    fields: &[
        f("path", Ty::Str, "Normalized absolute path."),
        f(
            "data",
            Ty::Bytes,
            "The content (its buffer is transferred).",
        ),
        f("mtime", Ty::Num, "Modification time, ms since the epoch."),
    ],
};

/// A file a run created or changed.
pub const CHANGED_FILE: Shape = Shape {
    name: "ChangedFile",
    doc: "A file a run created or changed.",
    fields: &[
        f("path", Ty::Str, "The path in the sandbox."),
        f(
            "data",
            Ty::Bytes,
            "The content (its buffer is transferred).",
        ),
    ],
};

const RUN_FIELDS: &[Field] = &[
    run_id("The run id (the host's counter)."),
    f(
        "code",
        Ty::Str,
        "The code (Python, or JavaScript as prepared by the host).",
    ),
    f("timeoutMs", Ty::Num, "The run's timeout."),
    f("maxOutputBytes", Ty::Num, "Cap on stdout + stderr."),
    f(
        "killGraceMs",
        Ty::Num,
        "How long JS left behind by the run may live.",
    ),
    moved(
        "put",
        Ty::List(&Ty::Shape(&PUT_FILE)),
        "Files the worker lacks.",
    ),
    f("del", Ty::List(&Ty::Str), "Paths the worker must delete."),
    f(
        "stdin",
        Ty::OrNull(&Ty::Str),
        "What `input()` and `sys.stdin` read, then EOF; null: no scripted input.",
    ),
    f(
        "vars",
        Ty::OrNull(&Ty::Str),
        "`vars`: JSON text of an object whose names (ASCII identifiers, no dunders, checked by \
         the host) the worker sets in the code's global scope before it runs; null: none.",
    ),
    f(
        "interactive",
        Ty::Bool,
        "Without `stdin`, the host answers `input()` (`onInput` or the element's `input` event); \
         only a cross-origin isolated den can ask.",
    ),
    f(
        "network",
        Ty::Bool,
        "The den has `network` options (the host makes its requests): a worker with JSPI \
         enters the run through it, so that `urllib.request` can wait for the host's answer.",
    ),
    f("lang", Ty::OneOf(&LANGS), "The language of `code`."),
    f(
        "js",
        Ty::OrNull(&Ty::Shape(&JS_CODE)),
        "For JavaScript: what `foxden_core::javascript::prepare` found in the code; else null.",
    ),
    f(
        "stopped",
        Ty::Bool,
        "Stopped as it was posted (`stop()` from the run's own start listener): the den page \
         never starts it; it hands the worker the files without the code and answers `Stopped`.",
    ),
    f(
        "readOnly",
        Ty::List(&Ty::Str),
        "The den's read-only paths, normalized (`foxden_core::readonly`): the worker marks the \
         files and folders they cover read-only as it places them (the host keeps them either way).",
    ),
];

/// `input` from the worker to the den page and from the den page to the host.
const INPUT_FIELDS: &[Field] = &[
    run_id("The run."),
    f(
        "prompt",
        Ty::Str,
        "The prompt `input()` was given (already printed to stdout), cut to 4096 chars.",
    ),
];

/// A worker's `input`: the host's fields, and whether the run made workers of its own.
const WORKER_INPUT_FIELDS: &[Field] = &[
    run_id("The run."),
    f(
        "prompt",
        Ty::Str,
        "The prompt `input()` was given (already printed to stdout), cut to 4096 chars.",
    ),
    opt(
        "workers",
        Ty::Bool,
        "The run made workers of its own, which may go on computing while this one waits: the \
         wait then counts against the timeout as without isolation.",
    ),
];

/// What the host found in a JavaScript run's code (`foxden_core::javascript::Prepared`).
pub const JS_CODE: Shape = Shape {
    name: "JsCode",
    doc: "A JavaScript run's code, as prepared by the host (`code` holds the rewritten text).",
    fields: &[
        f(
            "names",
            Ty::List(&Ty::Str),
            "Names bound by top-level `var`/`let`/`const`/`class` declarations.",
        ),
        f(
            "functions",
            Ty::List(&Ty::Str),
            "Names of top-level function declarations.",
        ),
        f(
            "splits",
            Ty::List(&Ty::Num),
            "UTF-16 offsets in `code` where a top-level statement may start, ascending.",
        ),
        f(
            "topReturn",
            Ty::Bool,
            "A `return` statement at the top level.",
        ),
        f(
            "topAwait",
            Ty::Bool,
            "An `await` outside functions (the code runs as an async function body).",
        ),
    ],
};

/// One representation of a display (a MIME bundle is a list of them).
pub const DISPLAY_ITEM: Shape = Shape {
    name: "DisplayItem",
    doc: "One MIME representation of a display: text, or bytes for images.",
    fields: &[
        f(
            "mime",
            Ty::Str,
            "The MIME type (`image/png`, `text/html`, …).",
        ),
        f(
            "text",
            Ty::OrNull(&Ty::Str),
            "The text of a text type, else null.",
        ),
        f(
            "bytes",
            Ty::OrNull(&Ty::Bytes),
            "The bytes of a binary type (PNG, JPEG), else null.",
        ),
    ],
};

const DISPLAY_FIELDS: &[Field] = &[
    run_id("The run."),
    f(
        "bundle",
        Ty::List(&Ty::Shape(&DISPLAY_ITEM)),
        "The representations, richest first, `text/plain` last.",
    ),
];

/// An HTTP header of a brokered request or answer.
pub const HTTP_HEADER: Shape = Shape {
    name: "HttpHeader",
    doc: "One HTTP header (`foxden.fetch`).",
    fields: &[
        f("name", Ty::Str, "The header name."),
        f("value", Ty::Str, "Its value."),
    ],
};

/// The `refusedBecause` reasons of a brokered request.
const REFUSALS: [&str; 10] = [
    Refusal::ALL[0].as_str(),
    Refusal::ALL[1].as_str(),
    Refusal::ALL[2].as_str(),
    Refusal::ALL[3].as_str(),
    Refusal::ALL[4].as_str(),
    Refusal::ALL[5].as_str(),
    Refusal::ALL[6].as_str(),
    Refusal::ALL[7].as_str(),
    Refusal::ALL[8].as_str(),
    Refusal::ALL[9].as_str(),
];

/// `foxden.fetch(url, …)`: worker → den page → host, forwarded as it came (after checks).
const FETCH_FIELDS: &[Field] = &[
    run_id("The run."),
    f(
        "req",
        Ty::Num,
        "The request's number in the run (the worker's counter).",
    ),
    f(
        "url",
        Ty::Str,
        "The URL as Python wrote it (the host parses it).",
    ),
    f("method", Ty::Str, "The method as Python wrote it."),
    f(
        "headers",
        Ty::List(&Ty::Shape(&HTTP_HEADER)),
        "Request headers.",
    ),
    moved("body", Ty::OrNull(&Ty::Bytes), "The request body, or null."),
];

/// The answer to a run's `input()`: from the host to the den page, and (on a den without
/// cross-origin isolation, whose worker waits through JSPI) on to the worker.
const INPUT_REPLY_FIELDS: &[Field] = &[
    run_id("The run that asked."),
    f(
        "text",
        Ty::OrNull(&Ty::Str),
        "The line typed (≤ 1 MiB UTF-8), or null: end of input.",
    ),
    f(
        "error",
        Ty::OrNull(&Ty::Str),
        "Why there is no answer (`input()` raises EOFError with it), or null.",
    ),
];

/// The host's answer to a `fetch`: host → den page → worker, forwarded as it came.
const FETCH_REPLY_FIELDS: &[Field] = &[
    run_id("The run."),
    f("req", Ty::Num, "The request it answers."),
    f(
        "status",
        Ty::OrNull(&Ty::Num),
        "The HTTP status, or null when refused.",
    ),
    f(
        "headers",
        Ty::List(&Ty::Shape(&HTTP_HEADER)),
        "Answer headers the browser exposes (at most 64, 16 KiB).",
    ),
    moved(
        "body",
        Ty::OrNull(&Ty::Bytes),
        "The answer body (at most `network.maxResponseBytes`), or null when refused.",
    ),
    f(
        "refused",
        Ty::OrNull(&Ty::OneOf(&REFUSALS)),
        "Why the request was refused or did not complete (`refusedBecause`), or null.",
    ),
    f("message", Ty::Str, "The refusal's message, or empty."),
];

/// A run of output on one stream.
pub const OUTPUT_PART: Shape = Shape {
    name: "OutputPart",
    doc: "Output printed on one stream, between two changes of stream.",
    fields: &[
        f("stream", Ty::OneOf(&STREAMS), "Which stream."),
        f("text", Ty::Str, "The output."),
    ],
};

const OUT_FIELDS: &[Field] = &[
    run_id("The run."),
    f(
        "parts",
        Ty::List(&Ty::Shape(&OUTPUT_PART)),
        "The output in print order, at most 1 024 parts (`MAX_OUT_PARTS`).",
    ),
];

/// The fields a worker's and a den page's `done` share.
macro_rules! done_fields {
    ($($extra:expr,)*) => {
        &[
            run_id("The run."),
            f("result", Ty::OrNull(&Ty::Str), "`repr()` of the last expression, or null."),
            f("error", Ty::OrNull(&Ty::Shape(&RUN_ERROR)), "Why the run failed, or null."),
            f("truncated", Ty::Bool, "Output was cut at `maxOutputBytes`."),
            moved("changed", Ty::List(&Ty::Shape(&CHANGED_FILE)), "Files created or changed."),
            f("deleted", Ty::List(&Ty::Str), "Paths deleted."),
            f(
                "tooManyFiles",
                Ty::Num,
                "0, or how many files the run changed when that is more than a den can hold \
                 (10 000): then `changed` and `deleted` are empty and none of it is kept.",
            ),
            $($extra,)*
            f("durationMs", Ty::Num, "Time the run took in the worker."),
        ]
    };
}

/// `window.postMessage` from the host page to the iframe.
pub static HOST_TO_DEN_WINDOW: Hop = Hop {
    name: "HostToDenWindow",
    route: "host → den page (window)",
    messages: &[Message {
        name: "Connect",
        t: None,
        channel: Channel::Window,
        when: "iframe `load`, once",
        fields: &[f(
            "foxden",
            Ty::Lit("connect"),
            "Marks the message; after it the den page reads its parent's messages.",
        )],
    }],
};

/// The host's messages on the port.
pub static HOST_TO_DEN: Hop = Hop {
    name: "HostToDen",
    route: "host → den page",
    messages: &[
        Message {
            name: "Boot",
            t: Some(HostToDen::Boot.as_str()),
            channel: Channel::Connected,
            when: "after `hello`, as soon as the assets are fetched",
            fields: &[
                moved(
                    "wasm",
                    Ty::OrNull(&Ty::Buffer),
                    "pyodide.asm.wasm, or null when it came as a stream in `wasm`.",
                ),
                moved("stdlib", Ty::Buffer, "python_stdlib.zip."),
                f("lock", Ty::Str, "pyodide-lock.json."),
                f(
                    "maxMemoryBytes",
                    Ty::Num,
                    "Cap on each worker's WebAssembly memory (0: none).",
                ),
                f("standby", Ty::Bool, "Keep a standby interpreter booted."),
                f(
                    "packages",
                    Ty::List(&Ty::Shape(&WHEEL)),
                    "Wheels every run worker installs after it boots (empty: none).",
                ),
                f(
                    "snapshotBytes",
                    Ty::Num,
                    "The length of the warm cache's snapshot, read before the entry is checked \
                     (a hint; 0: no entry): the den page boots its first worker at once, and the \
                     snapshot follows in `warm`.",
                ),
            ],
        },
        Message {
            name: "Wasm",
            t: Some(HostToDen::Wasm.as_str()),
            channel: Channel::Connected,
            when: "after `hello`, before `boot`, as soon as the wasm's download started (the den \
                   page compiles it while it downloads)",
            fields: &[moved(
                "wasm",
                Ty::Stream,
                "pyodide.asm.wasm's body (the host reads a tee of it for its checks and the \
                 warm cache key).",
            )],
        },
        Message {
            name: "Warm",
            t: Some(HostToDen::Warm.as_str()),
            channel: Channel::Connected,
            when: "after `boot`, once the warm cache was read (the den page compiles the wasm \
                   and starts its first worker meanwhile; that worker boots now)",
            fields: &[
                moved(
                    "snapshot",
                    Ty::OrNull(&Ty::Bytes),
                    "The warm cache's snapshot, packed (all-zero pages left out; its SHA-256 \
                     and layout checked by the host), or null.",
                ),
                f(
                    "copies",
                    Ty::OrNull(&Ty::List(&Ty::Num)),
                    "With `snapshot`: how to unpack it, as (from, to, length) triples of byte \
                     offsets (checked by the host); else null.",
                ),
                f(
                    "snapshotBytes",
                    Ty::Num,
                    "With `snapshot`: its unpacked length; else 0.",
                ),
                f(
                    "wantSnapshot",
                    Ty::Bool,
                    "The host's warm cache wants the snapshot.",
                ),
            ],
        },
        Message {
            name: "Run",
            t: Some(HostToDen::Run.as_str()),
            channel: Channel::Connected,
            when: "each run",
            fields: RUN_FIELDS,
        },
        Message {
            name: "Reset",
            t: Some(HostToDen::Reset.as_str()),
            channel: Channel::Connected,
            when: "`den.reset()`",
            fields: &[run_id("The reset's id (same counter as runs).")],
        },
        Message {
            name: "Stop",
            t: Some(HostToDen::Stop.as_str()),
            channel: Channel::Connected,
            when: "the element's Stop button: Python gets KeyboardInterrupt where it can (an \
                   isolated den's signal; where it waits, sleeps or awaits: `interrupt`); the \
                   worker is killed if it is still running 1 s later, or 400 ms after a worker \
                   without the signal did not answer `interrupted` (busy)",
            fields: &[run_id(
                "The run to stop (ignored unless it is the one running).",
            )],
        },
        Message {
            name: "InputReply",
            t: Some(HostToDen::InputReply.as_str()),
            channel: Channel::Connected,
            when: "the answer to an `input` request",
            fields: INPUT_REPLY_FIELDS,
        },
        Message {
            name: "FetchReply",
            t: Some(HostToDen::FetchReply.as_str()),
            channel: Channel::Connected,
            when: "the host made (or refused) a run's `fetch`",
            fields: FETCH_REPLY_FIELDS,
        },
    ],
};

/// The den page's messages on the host's port.
pub static DEN_TO_HOST: Hop = Hop {
    name: "DenToHost",
    route: "den page → host",
    messages: &[
        Message {
            name: "Hello",
            t: Some(DenToHost::Hello.as_str()),
            channel: Channel::Connected,
            when: "isolation checked",
            fields: &[f(
                "protocol",
                Ty::Num,
                "The protocol version the den page speaks.",
            )],
        },
        Message {
            name: "LoadError",
            t: Some(DenToHost::LoadError.as_str()),
            channel: Channel::Connected,
            when: "isolation or boot failed",
            fields: &[
                f(
                    "stage",
                    Ty::OneOf(&DEN_PAGE_STAGES),
                    "Where it failed (`DenLoadError.stage`).",
                ),
                f("message", Ty::Str, "What failed."),
                opt(
                    "package",
                    Ty::Str,
                    "The package whose wheel was refused (stage `package`).",
                ),
            ],
        },
        Message {
            name: "Ready",
            t: Some(DenToHost::Ready.as_str()),
            channel: Channel::Connected,
            when: "first worker booted",
            fields: &[
                f("bootMs", Ty::Num, "Time the worker took to boot."),
                f("denMs", Ty::Num, "Time from `boot` to ready."),
                f(
                    "interruptible",
                    Ty::Bool,
                    "A timeout interrupts Python instead of killing the worker.",
                ),
                f(
                    "warm",
                    Ty::OneOf(&["hit", "miss", "rejected"]),
                    "What became of the warm cache's snapshot.",
                ),
                opt(
                    "packagesMs",
                    Ty::Num,
                    "Time the wheels took to install (part of `bootMs`; absent without packages).",
                ),
            ],
        },
        Message {
            name: "Snapshot",
            t: Some(DenToHost::Snapshot.as_str()),
            channel: Channel::Connected,
            when: "once, when the maker made it and the host asked (`wantSnapshot`)",
            fields: &[moved(
                "snapshot",
                Ty::Bytes,
                "A copy of the memory snapshot of a fresh interpreter.",
            )],
        },
        Message {
            name: "Queued",
            t: Some(DenToHost::Queued.as_str()),
            channel: Channel::Connected,
            when: "on arrival, only for a run that cannot start at once (its worker is booting): the watchdog gives it `loadTimeoutMs` + 3 s until `started`",
            fields: &[run_id("The run.")],
        },
        Message {
            name: "Started",
            t: Some(DenToHost::Started.as_str()),
            channel: Channel::Connected,
            when: "a `queued` run was handed to its booted worker (its watchdog clock starts; other runs started when posted)",
            fields: &[run_id("The run.")],
        },
        Message {
            name: "Out",
            t: Some(DenToHost::Out.as_str()),
            channel: Channel::Connected,
            when: "streamed, batched ≤ 15 ms / 8 KiB / 1 024 parts",
            fields: OUT_FIELDS,
        },
        Message {
            name: "Display",
            t: Some(DenToHost::Display.as_str()),
            channel: Channel::Connected,
            when: "`foxden.display(obj)`, or a last expression with `_repr_*_` methods",
            fields: DISPLAY_FIELDS,
        },
        Message {
            name: "Input",
            t: Some(DenToHost::Input.as_str()),
            channel: Channel::Connected,
            when:
                "`input()` in a run with `interactive` (on a den without cross-origin isolation, \
                 through JSPI); the run's timeout stops until `input-reply`",
            fields: INPUT_FIELDS,
        },
        Message {
            name: "Done",
            t: Some(DenToHost::Done.as_str()),
            channel: Channel::Connected,
            when: "the run ended",
            fields: done_fields!(f(
                "restarted",
                Ty::Bool,
                "The worker was restarted (Python variables lost)."
            ),),
        },
        Message {
            name: "ResetDone",
            t: Some(DenToHost::ResetDone.as_str()),
            channel: Channel::Connected,
            when: "new worker booted (or failed to)",
            fields: &[
                run_id("The reset."),
                opt(
                    "from",
                    Ty::OneOf(&BOOTED_FROM),
                    "How the new interpreter booted (absent on error).",
                ),
                opt("bootMs", Ty::Num, "Time it took to boot (absent on error)."),
                opt(
                    "packagesMs",
                    Ty::Num,
                    "Time its wheels took to install (part of `bootMs`).",
                ),
                opt(
                    "error",
                    Ty::Str,
                    "Why no interpreter booted (absent on success).",
                ),
            ],
        },
        Message {
            name: "Fetch",
            t: Some(DenToHost::Fetch.as_str()),
            channel: Channel::Connected,
            when: "`foxden.fetch(url, …)` in a run, checked by the den page",
            fields: FETCH_FIELDS,
        },
    ],
};

/// The den page's messages to a worker.
pub static DEN_TO_WORKER: Hop = Hop {
    name: "DenToWorker",
    route: "den page → worker",
    messages: &[
        Message {
            name: "Boot",
            t: Some("boot"),
            channel: Channel::WorkerGlobal,
            when: "worker start",
            fields: &[
                f(
                    "role",
                    Ty::OneOf(&["run", "maker"]),
                    "`run` runs code; `maker` makes the snapshot and is terminated.",
                ),
                f(
                    "key",
                    Ty::Str,
                    "128 random bits (hex): the worker posts everything as `[key, message]`, and \
                     the den page reads nothing else from the worker's global channel.",
                ),
                f("module", Ty::WasmModule, "The compiled pyodide.asm.wasm."),
                moved("stdlib", Ty::Buffer, "A copy of python_stdlib.zip."),
                f("lock", Ty::Str, "pyodide-lock.json."),
                f(
                    "interrupt",
                    Ty::OrNull(&Ty::Int32Array),
                    "Pyodide's interrupt buffer, this worker's own (a signal left unread by a killed worker never reaches the next), when the den page is cross-origin isolated.",
                ),
                f(
                    "input",
                    Ty::OrNull(&Ty::Int32Array),
                    "The input buffer (state, length, then up to 1 MiB of UTF-8), when isolated.",
                ),
                f(
                    "maxMemoryBytes",
                    Ty::Num,
                    "Cap on the WebAssembly memory (0: none).",
                ),
                moved(
                    "snapshot",
                    Ty::OrNull(&Ty::Bytes),
                    "A copy of the snapshot to resume from (role `run`), or null.",
                ),
                f(
                    "copies",
                    Ty::OrNull(&Ty::List(&Ty::Num)),
                    "With a packed `snapshot`: the (from, to, length) triples that unpack it; \
                     null when it is not packed.",
                ),
                f(
                    "snapshotBytes",
                    Ty::Num,
                    "The unpacked snapshot's length. With `snapshot` null and this above 0, the \
                     snapshot follows (`snapshot`): the worker instantiates Pyodide \
                     meanwhile.",
                ),
                f(
                    "packages",
                    Ty::List(&Ty::Shape(&WHEEL)),
                    "Wheels to install before any run (role `run`; the maker gets none).",
                ),
                f(
                    "verified",
                    Ty::Bool,
                    "An earlier worker of this den page checked these wheels in full: skip re-hashing each file.",
                ),
                f(
                    "installed",
                    Ty::OrNull(&Ty::List(&Ty::Shape(&CHANGED_FILE))),
                    "The files the den page's first worker installed from these wheels (before any user code): written as they are, instead of installing again; or null.",
                ),
            ],
        },
        Message {
            name: "Run",
            t: Some("run"),
            channel: Channel::WorkerGlobal,
            when: "the host's `run`, forwarded as it came",
            fields: RUN_FIELDS,
        },
        Message {
            name: "FetchReply",
            t: Some("fetch-reply"),
            channel: Channel::WorkerGlobal,
            when: "the host's `fetch-reply` for the run in flight, forwarded as it came",
            fields: FETCH_REPLY_FIELDS,
        },
        Message {
            name: "InputReply",
            t: Some("input-reply"),
            channel: Channel::WorkerGlobal,
            when: "the host's `input-reply` for the run in flight, checked (at most 1 MiB), to a \
                   worker without an input buffer (no cross-origin isolation) that waits through \
                   JSPI",
            fields: INPUT_REPLY_FIELDS,
        },
        Message {
            name: "Interrupt",
            t: Some("interrupt"),
            channel: Channel::WorkerGlobal,
            when: "the run in flight was stopped, or timed out, where Python can be \
                   interrupted: what it waits for from the host (`input()` through JSPI; an \
                   isolated worker reads state 4 from its input buffer instead; requests) and its \
                   `time.sleep` end, raising KeyboardInterrupt in Python",
            fields: &[run_id("The run stopped.")],
        },
        Message {
            name: "Snapshot",
            t: Some("snapshot"),
            channel: Channel::WorkerGlobal,
            when: "once, to a worker booted with `snapshotBytes` and no snapshot, when the \
                   host's `warm` came",
            fields: &[
                moved(
                    "snapshot",
                    Ty::OrNull(&Ty::Bytes),
                    "The snapshot of `warm` (a copy), or null: the worker then boots from scratch.",
                ),
                f(
                    "copies",
                    Ty::OrNull(&Ty::List(&Ty::Num)),
                    "As in `boot`.",
                ),
            ],
        },
    ],
};

/// A worker's messages on its private port.
pub static WORKER_TO_DEN: Hop = Hop {
    name: "WorkerToDen",
    route: "worker → den page",
    messages: &[
        Message {
            name: "Booted",
            t: Some("booted"),
            channel: Channel::Keyed,
            when: "role `run` booted",
            fields: &[
                f("ms", Ty::Num, "Time the boot took."),
                f("from", Ty::OneOf(&BOOTED_FROM), "How it booted."),
                opt(
                    "packagesMs",
                    Ty::Num,
                    "Time the wheels took to install (part of `ms`).",
                ),
                Field {
                    optional: true,
                    ..moved(
                        "installed",
                        Ty::List(&Ty::Shape(&CHANGED_FILE)),
                        "The files the install wrote, when it checked the wheels in full (first worker).",
                    )
                },
            ],
        },
        Message {
            name: "BootError",
            t: Some("boot-error"),
            channel: Channel::Keyed,
            when: "the boot failed",
            fields: &[
                f("message", Ty::Str, "Why."),
                opt("package", Ty::Str, "The package whose wheel was refused."),
            ],
        },
        Message {
            name: "Snapshot",
            t: Some("snapshot"),
            channel: Channel::Keyed,
            when: "role `maker`, once, then terminated",
            fields: &[
                f("ms", Ty::Num, "Time the boot took."),
                moved(
                    "snapshot",
                    Ty::Bytes,
                    "The memory snapshot of a fresh interpreter.",
                ),
            ],
        },
        Message {
            name: "Out",
            t: Some("out"),
            channel: Channel::Keyed,
            when: "streamed, batched ≤ 15 ms / 8 KiB / 1 024 parts",
            fields: OUT_FIELDS,
        },
        Message {
            name: "Display",
            t: Some("display"),
            channel: Channel::Keyed,
            when: "`foxden.display(obj)`, after the output printed before it",
            fields: DISPLAY_FIELDS,
        },
        Message {
            name: "Input",
            t: Some("input"),
            channel: Channel::Keyed,
            when: "`input()` in an interactive run; then the worker waits on the input buffer, or \
                   without one, Python is suspended (JSPI) until `input-reply`",
            fields: WORKER_INPUT_FIELDS,
        },
        Message {
            name: "Done",
            t: Some("done"),
            channel: Channel::Keyed,
            when: "the run ended",
            fields: done_fields!(f(
                "leftover",
                Ty::Bool,
                "JS or asyncio work outlived the run: restart the worker."
            ),),
        },
        Message {
            name: "Fetch",
            t: Some("fetch"),
            channel: Channel::Keyed,
            when: "`foxden.fetch(url, …)` during a run",
            fields: FETCH_FIELDS,
        },
        Message {
            name: "Interrupted",
            t: Some("interrupted"),
            channel: Channel::Keyed,
            when: "the worker read `interrupt` (so it was not busy): the run's waits and its \
                   sleep end with KeyboardInterrupt; the den page gives it the grace to end \
                   before it restarts the worker (without this, it restarts it soon)",
            fields: &[
                run_id("The run stopped."),
                f(
                    "waited",
                    Ty::Bool,
                    "It ended a wait (input, a request, an await), where KeyboardInterrupt is \
                     now raised: no interrupt signal follows.",
                ),
            ],
        },
    ],
};

/// Every hop, in the order of a den's life.
pub static HOPS: [&Hop; 5] = [
    &HOST_TO_DEN_WINDOW,
    &HOST_TO_DEN,
    &DEN_TO_HOST,
    &DEN_TO_WORKER,
    &WORKER_TO_DEN,
];

/// Where the generated declarations live, from the repository root.
pub const TYPESCRIPT_PATH: &str = "den-page/protocol.d.ts";

fn ts_type(ty: &Ty) -> String {
    match ty {
        Ty::Str => "string".into(),
        Ty::Num => "number".into(),
        Ty::Bool => "boolean".into(),
        Ty::Bytes => "Uint8Array".into(),
        Ty::Buffer => "ArrayBuffer".into(),
        Ty::Int32Array => "Int32Array".into(),
        Ty::Port => "MessagePort".into(),
        Ty::WasmModule => "WebAssembly.Module".into(),
        Ty::Stream => "ReadableStream<Uint8Array>".into(),
        Ty::Lit(s) => format!("{s:?}"),
        Ty::OneOf(v) => v
            .iter()
            .map(|s| format!("{s:?}"))
            .collect::<Vec<_>>()
            .join(" | "),
        Ty::List(t) => match t {
            Ty::OneOf(_) | Ty::OrNull(_) => format!("({})[]", ts_type(t)),
            _ => format!("{}[]", ts_type(t)),
        },
        Ty::OrNull(t) => format!("{} | null", ts_type(t)),
        Ty::Shape(s) => s.name.into(),
    }
}

fn ts_fields(out: &mut String, fields: &[Field]) {
    for fl in fields {
        let moved = if fl.transferred { " Transferred." } else { "" };
        out.push_str(&format!("  /** {}{moved} */\n", fl.doc));
        let q = if fl.optional { "?" } else { "" };
        out.push_str(&format!("  {}{q}: {};\n", fl.name, ts_type(&fl.ty)));
    }
}

fn shapes_in(ty: &Ty, found: &mut Vec<&'static Shape>) {
    match ty {
        Ty::List(t) | Ty::OrNull(t) => shapes_in(t, found),
        Ty::Shape(s) => {
            if !found.iter().any(|x| x.name == s.name) {
                found.push(s);
            }
            for fl in s.fields {
                shapes_in(&fl.ty, found);
            }
        }
        _ => {}
    }
}

/// Every named shape the messages use, in order of first use.
pub fn shapes() -> Vec<&'static Shape> {
    let mut found = Vec::new();
    for hop in HOPS {
        for m in hop.messages {
            for fl in m.fields {
                shapes_in(&fl.ty, &mut found);
            }
        }
    }
    found
}

/// `den-page/protocol.d.ts`: one interface per message and one union per hop.
pub fn typescript() -> String {
    let mut out = String::from(
        "// Generated from element/core/src/protocol/schema.rs by `protocol::schema::typescript()`.\n\
         // Do not edit: change the table and run `FOXDEN_BLESS=1 cargo test -p foxden-core protocol`.\n\
         //\n\
         // The messages between the host, the den page (den.js) and the worker (worker.js). A type says\n\
         // what an honest sender posts; the reader of a den page or worker message checks it anyway.\n\n",
    );
    out.push_str(&format!(
        "/** The protocol version a den page announces in `hello`. */\nexport type ProtocolVersion = {PROTOCOL_VERSION};\n"
    ));
    for s in shapes() {
        out.push_str(&format!(
            "\n/** {} */\nexport interface {} {{\n",
            s.doc, s.name
        ));
        ts_fields(&mut out, s.fields);
        out.push_str("}\n");
    }
    // A message carried unchanged on several hops (the run: host → den page → worker, and
    // host → worker on the run port) is written out once; the later hops name it.
    let mut written: Vec<(Option<&str>, &[Field], String)> = Vec::new();
    for hop in HOPS {
        out.push_str(&format!("\n// --- {} ---\n", hop.route));
        for m in hop.messages {
            let doc = format!(
                "\n/** {}: {}. On {}.",
                m.t.unwrap_or("(no `t`)"),
                m.when,
                m.channel.describe()
            );
            let name = format!("{}{}", hop.name, m.name);
            if let Some((_, _, first)) = written.iter().find(|w| w.0 == m.t && w.1 == m.fields) {
                out.push_str(&format!(
                    "{doc} The same message as `{first}`. */\nexport type {name} = {first};\n"
                ));
                continue;
            }
            written.push((m.t, m.fields, name.clone()));
            out.push_str(&format!("{doc} */\nexport interface {name} {{\n"));
            if let Some(t) = m.t {
                out.push_str(&format!("  t: {t:?};\n"));
            }
            ts_fields(&mut out, m.fields);
            out.push_str("}\n");
        }
        let names: Vec<String> = hop
            .messages
            .iter()
            .map(|m| format!("{}{}", hop.name, m.name))
            .collect();
        out.push_str(&format!(
            "\n/** Every message {}. */\nexport type {} = {};\n",
            hop.route,
            hop.name,
            names.join(" | ")
        ));
    }
    out
}

/// A field as the docs table shows it: its name, with the values of a closed set, the fields of
/// a shape, `?` when it may be absent and "transferred" when its buffer moves.
fn md_field(fl: &Field) -> String {
    let q = if fl.optional { "?" } else { "" };
    let mut s = format!("`{}`{q}", fl.name);
    let inner = match fl.ty {
        Ty::List(t) | Ty::OrNull(t) => *t,
        t => t,
    };
    match inner {
        Ty::OneOf(v) => s.push_str(&format!(
            " ({})",
            v.iter()
                .map(|x| format!("`{x}`"))
                .collect::<Vec<_>>()
                .join("/")
        )),
        Ty::Lit(v) => s.push_str(&format!(" (`{v:?}`)")),
        Ty::Shape(sh) => {
            let names: Vec<&str> = sh.fields.iter().map(|x| x.name).collect();
            let list = matches!(fl.ty, Ty::List(_));
            let (a, b) = if list { ("[{", "}]") } else { ("{", "}") };
            s.push_str(&format!(" {a}{}{b}", names.join(", ")));
        }
        _ => {}
    }
    if matches!(fl.ty, Ty::OrNull(_)) {
        s.push_str(" or null");
    }
    if fl.transferred {
        s.push_str(" (transferred)");
    }
    s
}

/// The message table of docs/architecture.md.
pub fn markdown() -> String {
    let mut out =
        String::from("| from → to | channel | `t` | fields | when |\n|---|---|---|---|---|\n");
    for hop in HOPS {
        for m in hop.messages {
            let t = m.t.map_or("—".to_owned(), |t| format!("`{t}`"));
            let fields: Vec<String> = m.fields.iter().map(md_field).collect();
            out.push_str(&format!(
                "| {} | {} | {t} | {} | {} |\n",
                hop.route,
                m.channel.describe(),
                fields.join(", "),
                m.when
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generated::repo;

    fn tags(hop: &Hop) -> Vec<&'static str> {
        hop.messages.iter().filter_map(|m| m.t).collect()
    }

    #[test]
    fn host_tags_are_the_enums() {
        let want: Vec<&str> = DenToHost::ALL.iter().map(|k| k.as_str()).collect();
        let mut have = tags(&DEN_TO_HOST);
        let mut sorted = want.clone();
        have.sort_unstable();
        sorted.sort_unstable();
        assert_eq!(have, sorted, "DEN_TO_HOST must list every DenToHost once");
        for k in DenToHost::ALL {
            assert_eq!(DenToHost::parse(k.as_str()), Some(*k));
        }
        let mut have = tags(&HOST_TO_DEN);
        let mut want: Vec<&str> = HostToDen::ALL.iter().map(|k| k.as_str()).collect();
        have.sort_unstable();
        want.sort_unstable();
        assert_eq!(have, want, "HOST_TO_DEN must list every HostToDen once");
    }

    #[test]
    fn names_are_unique_and_closed_sets_match_the_enums() {
        for hop in HOPS {
            let mut names: Vec<&str> = hop.messages.iter().map(|m| m.name).collect();
            let mut t = tags(hop);
            let n = (names.len(), t.len());
            names.sort_unstable();
            names.dedup();
            t.sort_unstable();
            t.dedup();
            assert_eq!((names.len(), t.len()), n, "{}: duplicate message", hop.name);
            for m in hop.messages {
                let mut f: Vec<&str> = m.fields.iter().map(|x| x.name).collect();
                let len = f.len();
                f.sort_unstable();
                f.dedup();
                assert_eq!(f.len(), len, "{}{}: duplicate field", hop.name, m.name);
                assert!(!f.contains(&"t"), "`t` is the tag, not a field");
            }
        }
        let kinds: Vec<&str> = ErrorKind::ALL.iter().map(|k| k.as_str()).collect();
        assert_eq!(ERROR_KINDS.to_vec(), kinds);
        let streams: Vec<&str> = Stream::ALL.iter().map(|k| k.as_str()).collect();
        assert_eq!(STREAMS.to_vec(), streams);
        for s in DEN_PAGE_STAGES {
            assert_eq!(LoadStage::from_den_page(Some(s)).as_str(), s, "{s}");
        }
        // A worker's `done` is the den page's, with `leftover` instead of `restarted`.
        let fields = |m: &Message| -> Vec<&str> { m.fields.iter().map(|x| x.name).collect() };
        let w = fields(WORKER_TO_DEN.message("done").unwrap());
        let d = fields(DEN_TO_HOST.message("done").unwrap());
        assert_eq!(
            w.iter()
                .map(|x| x.replace("leftover", "restarted"))
                .collect::<Vec<_>>(),
            d
        );
        // The den page forwards the host's run to the worker as it came.
        assert_eq!(
            DEN_TO_WORKER.message("run").unwrap().fields,
            HOST_TO_DEN.message("run").unwrap().fields
        );
        // A fetch goes worker → den page → host, its answer back, with the same fields.
        assert_eq!(
            WORKER_TO_DEN.message("fetch").unwrap().fields,
            DEN_TO_HOST.message("fetch").unwrap().fields
        );
        assert_eq!(
            DEN_TO_WORKER.message("fetch-reply").unwrap().fields,
            HOST_TO_DEN.message("fetch-reply").unwrap().fields
        );
        let reasons: Vec<&str> = Refusal::ALL.iter().map(|r| r.as_str()).collect();
        assert_eq!(REFUSALS.to_vec(), reasons);
    }

    #[test]
    fn den_page_announces_this_protocol() {
        let den = std::fs::read_to_string(repo().join("den-page/den.js")).expect("den.js");
        assert!(
            den.contains(&format!("const PROTOCOL = {PROTOCOL_VERSION};")),
            "den.js must announce protocol {PROTOCOL_VERSION}"
        );
    }

    #[test]
    fn typescript_shapes() {
        let ts = typescript();
        assert!(
            ts.contains("export type HostToDen = HostToDenBoot | HostToDenWasm | HostToDenWarm | HostToDenRun | HostToDenReset | HostToDenStop | HostToDenInputReply | HostToDenFetchReply;\n")
        );
        assert!(ts.contains("  error: RunError | null;\n"));
        assert!(ts.contains("  put: PutFile[];\n"));
        assert!(ts.contains("  from?: \"scratch\" | \"snapshot\";\n"));
        assert!(ts.contains("export interface HostToDenWindowConnect {\n  /**"));
        assert_eq!(
            shapes().iter().map(|s| s.name).collect::<Vec<_>>(),
            [
                "Wheel",
                "PutFile",
                "JsCode",
                "HttpHeader",
                "OutputPart",
                "DisplayItem",
                "RunError",
                "ChangedFile"
            ]
        );
    }

    #[test]
    fn committed_typescript_is_generated() {
        crate::generated::check(TYPESCRIPT_PATH, "", "", &typescript(), "protocol");
    }

    #[test]
    fn docs_message_table_is_generated() {
        crate::generated::check(
            "docs/architecture.md",
            "<!-- protocol-table:start -->\n",
            "<!-- protocol-table:end -->",
            &markdown(),
            "protocol",
        );
    }
}
