//! The stable codes of the API's errors: `DenError.code` and `DenLoadError.stage`. Each is one
//! enum here, and the `.d.ts` lists exactly these values as its union types (checked by a test).

macro_rules! string_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $text:literal,)+ }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum $name {
            $($(#[$vmeta])* $variant,)+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];

            /// The string the API uses.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }

            /// Parses the API string.
            pub fn parse(s: &str) -> Option<Self> {
                Self::ALL.iter().copied().find(|v| v.as_str() == s)
            }
        }
    };
}

string_enum! {
    /// `DenError.code`.
    DenErrorCode {
        /// A den of this name is already open in this page.
        NameInUse = "name-in-use",
        /// An IndexedDB den is open in another tab or window.
        Locked = "locked",
        /// The den (or the element's den) is closed.
        Closed = "closed",
        /// The den's byte or file cap would be exceeded.
        Cap = "cap",
        /// A path would be both a file and a folder.
        Conflict = "conflict",
        /// No file at that path.
        NotFound = "not-found",
        /// An option or attribute has a bad value (`option` names it).
        BadOption = "bad-option",
        /// File data of the wrong type.
        BadData = "bad-data",
        /// IndexedDB failed.
        Storage = "storage",
        /// The interpreter did not restart.
        Reset = "reset",
    }
}

string_enum! {
    /// `DenLoadError.stage`: where opening a den failed.
    LoadStage {
        /// Fetching or checking the Pyodide files.
        Assets = "assets",
        /// Creating the iframe, or there is no page to put it in (Node.js, a worker).
        Iframe = "iframe",
        /// The den page's isolation check.
        Isolation = "isolation",
        /// The den page's address (it redirects).
        DenPage = "den-page",
        /// The den page speaks another protocol version.
        Protocol = "protocol",
        /// Handing the assets over.
        Message = "message",
        /// Compiling the wasm in the den page.
        Wasm = "wasm",
        /// Booting Pyodide.
        Pyodide = "pyodide",
        /// `loadTimeoutMs` passed.
        Timeout = "timeout",
        /// Any other failure the den page reported.
        Den = "den",
        /// A wheel of `packages`: not fetched, a wrong hash or tags, corrupt, or a missing
        /// dependency (`DenLoadError.package` names it).
        Package = "package",
        /// A runtime adapter's `start()` failed.
        Runtime = "runtime",
    }
}

impl LoadStage {
    /// A stage named by a den page (which may send anything): unknown names, and the stages
    /// only the host reports (`assets`, `timeout`, `protocol`, …), become `Den`.
    pub fn from_den_page(s: Option<&str>) -> Self {
        s.filter(|s| crate::protocol::schema::DEN_PAGE_STAGES.contains(s))
            .and_then(Self::parse)
            .unwrap_or(LoadStage::Den)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_den_page_names_only_its_own_stages() {
        use crate::protocol::schema::DEN_PAGE_STAGES;
        for s in DEN_PAGE_STAGES {
            assert_eq!(LoadStage::from_den_page(Some(s)).as_str(), s);
        }
        for s in [
            "assets", "timeout", "protocol", "den-page", "iframe", "runtime", "nope",
        ] {
            assert_eq!(LoadStage::from_den_page(Some(s)), LoadStage::Den, "{s}");
        }
        assert_eq!(LoadStage::from_den_page(None), LoadStage::Den);
    }

    /// The values of a `.d.ts` union type written as `readonly <field>: "a" | "b" …;` in a class.
    fn union(dts: &str, class: &str, field: &str) -> Vec<String> {
        let start = dts
            .find(&format!("export declare class {class} "))
            .expect("class in the .d.ts");
        let body = &dts[start..];
        let body = &body[..body.find("\n}").expect("end of class")];
        let line = body
            .lines()
            .find(|l| l.trim().starts_with(&format!("readonly {field}:")))
            .expect("field in the class");
        line.split('"')
            .skip(1)
            .step_by(2)
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn the_dts_lists_exactly_these_codes() {
        // The error classes are declared with the API's types (foxden.d.ts re-exports them).
        let dts = include_str!("../../js/types.d.ts");
        let codes: Vec<String> = DenErrorCode::ALL
            .iter()
            .map(|c| c.as_str().to_owned())
            .collect();
        assert_eq!(union(dts, "DenError", "code"), codes);
        let stages: Vec<String> = LoadStage::ALL
            .iter()
            .map(|c| c.as_str().to_owned())
            .collect();
        assert_eq!(union(dts, "DenLoadError", "stage"), stages);
    }

    #[test]
    fn parse_round_trips() {
        for c in DenErrorCode::ALL {
            assert_eq!(DenErrorCode::parse(c.as_str()), Some(*c));
        }
        assert_eq!(LoadStage::from_den_page(Some("pwned")), LoadStage::Den);
        assert_eq!(
            LoadStage::from_den_page(Some("isolation")),
            LoadStage::Isolation
        );
        assert_eq!(LoadStage::from_den_page(None), LoadStage::Den);
    }
}
