//! One table per enumeration of the C API: [`code_table!`] defines a core enum from a list of
//! `Variant = code, C_CONSTANT_NAME [, "words"];` lines and generates, from that one list, the
//! explicit discriminants, `code`, `from_code`, `ALL`, `c_name`, `name` and `choices`.
//!
//! The C constants themselves stay in `src/capi` as plain `pub const` items (cbindgen reads them
//! there and does not expand macros); `src/capi/pins.rs` checks that every constant of the header
//! has its pinned value and that every table agrees with the header, name for name and code for code.

/// Define a `#[repr(i32)]` enum with explicit codes, and its lookups, from one table:
///
/// ```ignore
/// code_table! {
///     /// Memory space.
///     pub enum Location {
///         Host = 0, PARLOPS_MEMORY_HOST;
///         Cuda = 1, PARLOPS_MEMORY_CUDA, "CUDA device memory";
///     }
/// }
/// ```
///
/// generates `Location::ALL` (table order), `code()`, `from_code(i32) -> Option<Self>`,
/// `c_name()` (the C constant's name, e.g. "PARLOPS_MEMORY_HOST"), `name()` (the words of the line,
/// or the C name when a line has none) and `choices()` (the valid values, for error messages).
/// `pub enum Kind else Internal { .. }` makes `from_code` total: unknown codes give `Internal`.
macro_rules! code_table {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident $(else $fallback:ident)? {
            $( $(#[$vmeta:meta])* $v:ident = $code:literal, $c:ident $(, $words:literal)? ; )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(i32)]
        $vis enum $name {
            $( $(#[$vmeta])* $v = $code, )+
        }

        impl $name {
            /// Every value, in the table's order.
            pub const ALL: &'static [$name] = &[$($name::$v),+];

            /// The C constant's value.
            pub const fn code(self) -> i32 {
                self as i32
            }

            $crate::codes::code_table!(@from_code $name $(else $fallback)? { $($v = $code),+ });

            /// The name of the C constant, e.g. "PARLOPS_F64".
            pub const fn c_name(self) -> &'static str {
                match self {
                    $( $name::$v => stringify!($c), )+
                }
            }

            /// The words for this value (the C constant's name where the table gives none).
            pub const fn name(self) -> &'static str {
                match self {
                    $( $name::$v => $crate::codes::code_table!(@first $($words,)? stringify!($c)), )+
                }
            }

            /// The valid values for an error message: "A = 0, B = 1 or C = 2", or "A .. Z = 0..25"
            /// for a longer run of consecutive codes.
            pub fn choices() -> String {
                $crate::codes::choices(Self::ALL.iter().map(|v| (v.c_name(), v.code())))
            }
        }
    };
    (@from_code $name:ident { $($v:ident = $code:literal),+ }) => {
        /// The value with C code `c`, if any.
        pub const fn from_code(c: i32) -> Option<$name> {
            match c {
                $( $code => Some($name::$v), )+
                _ => None,
            }
        }
    };
    (@from_code $name:ident else $fallback:ident { $($v:ident = $code:literal),+ }) => {
        /// The value with C code `c`; unknown codes give the fallback of the table.
        pub const fn from_code(c: i32) -> $name {
            match c {
                $( $code => $name::$v, )+
                _ => $name::$fallback,
            }
        }
    };
    (@first $a:expr $(, $rest:expr)*) => {
        $a
    };
}
pub(crate) use code_table;

/// The text of `choices()`: "A = 0, B = 1 or C = 2"; "A .. Z = 0..25" for more than three
/// consecutive codes.
pub(crate) fn choices<'a>(vals: impl Iterator<Item = (&'a str, i32)>) -> String {
    let v: Vec<(&str, i32)> = vals.collect();
    let consecutive = v.windows(2).all(|w| w[1].1 == w[0].1 + 1);
    match v.as_slice() {
        [] => String::new(),
        [(n, c)] => format!("{n} = {c}"),
        [first, .., last] if consecutive && v.len() > 3 => {
            format!("{} .. {} = {}..{}", first.0, last.0, first.1, last.1)
        }
        [init @ .., last] => {
            let head: Vec<String> = init.iter().map(|(n, c)| format!("{n} = {c}")).collect();
            format!("{} or {} = {}", head.join(", "), last.0, last.1)
        }
    }
}

#[cfg(test)]
mod tests {
    code_table! {
        /// A test table.
        enum Demo {
            A = 0, DEMO_A;
            B = 1, DEMO_B, "bee";
            Neg = -3, DEMO_NEG;
        }
    }
    code_table! {
        enum Total else Other {
            One = 1, TOTAL_ONE;
            Other = 9, TOTAL_OTHER;
        }
    }

    #[test]
    fn table_lookups() {
        assert_eq!(Demo::ALL, &[Demo::A, Demo::B, Demo::Neg]);
        for &d in Demo::ALL {
            assert_eq!(Demo::from_code(d.code()), Some(d));
        }
        assert_eq!(Demo::from_code(2), None);
        assert_eq!(Demo::Neg.code(), -3);
        assert_eq!(Demo::A.name(), "DEMO_A");
        assert_eq!(Demo::B.name(), "bee");
        assert_eq!(Demo::B.c_name(), "DEMO_B");
        assert_eq!(Demo::choices(), "DEMO_A = 0, DEMO_B = 1 or DEMO_NEG = -3");
        assert_eq!(Total::from_code(1), Total::One);
        assert_eq!(Total::from_code(5), Total::Other);
        assert_eq!(Total::ALL.len(), 2);
        assert_eq!(
            (Total::Other.code(), Total::Other.name()),
            (9, "TOTAL_OTHER")
        );
        assert_eq!(Total::One.c_name(), "TOTAL_ONE");
        assert_eq!(Total::choices(), "TOTAL_ONE = 1 or TOTAL_OTHER = 9");
        let long = [("A", 0), ("B", 1), ("C", 2), ("D", 3)];
        assert_eq!(super::choices(long.into_iter()), "A .. D = 0..3");
    }
}
