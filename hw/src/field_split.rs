//! Named fields out of a packed word (a table row, a transport header), as a combinational
//! block whose bit positions come from the layout's own offset function, so a module never
//! retypes an offset (`hw/RULES.md` rule 5: a `const` in `#[hdl_gen]` reaches the Verilog as
//! its name). [`field_split!`] declares one such block: an input `word` and one output per
//! field; simulated with `get_bits` at the layout's offsets, written as part-selects.

/// Declares a field splitter: `field_split!(Name, WORD_BITS, offset_fn, { port: WIDTH =>
/// "FIELD", ... })`, where `offset_fn(&str) -> Option<(offset, width)>` is the layout's lookup.
/// A port's width must be its field's (checked when the block is built).
#[macro_export]
macro_rules! field_split {
    ($(#[$m:meta])* $name:ident, $bits:expr, $offset:path, { $($port:ident : $w:expr => $field:expr),* $(,)? }) => {
        $(#[$m])*
        #[derive(rust_hdl::prelude::LogicBlock)]
        pub struct $name {
            pub word: rust_hdl::prelude::Signal<rust_hdl::prelude::In, rust_hdl::prelude::Bits<{ $bits }>>,
            $(pub $port: rust_hdl::prelude::Signal<rust_hdl::prelude::Out, rust_hdl::prelude::Bits<{ $w }>>,)*
        }

        impl Default for $name {
            fn default() -> Self {
                $(
                    let (_, w) = $offset($field)
                        .unwrap_or_else(|| panic!("{}: no field {}", stringify!($name), $field));
                    assert!(w == $w, "{}: field {} is {} bits, its port {}", stringify!($name), $field, w, $w);
                )*
                $name {
                    word: Default::default(),
                    $($port: Default::default(),)*
                }
            }
        }

        impl rust_hdl::prelude::Logic for $name {
            fn update(&mut self) {
                let v = self.word.val();
                $(
                    let (o, _) = $offset($field).expect("checked when built");
                    self.$port.next = v.get_bits::<{ $w }>(o);
                )*
            }

            fn connect(&mut self) {
                $(self.$port.connect();)*
            }

            fn hdl(&self) -> rust_hdl::prelude::Verilog {
                let mut s = String::from("always @(*) begin\n");
                $(
                    let (o, w) = $offset($field).expect("checked when built");
                    s.push_str(&format!(
                        "    {} = word[{}:{}];\n",
                        stringify!($port), o + w - 1, o
                    ));
                )*
                s.push_str("end\n");
                rust_hdl::prelude::Verilog::Custom(s)
            }
        }
    };
}

/// The inverse of [`field_split!`]: `field_join!(Name, WORD_BITS, offset_fn, { port: WIDTH =>
/// "FIELD", ... })` declares a block with one input per field and the packed `word` out;
/// fields not named are 0.
#[macro_export]
macro_rules! field_join {
    ($(#[$m:meta])* $name:ident, $bits:expr, $offset:path, { $($port:ident : $w:expr => $field:expr),* $(,)? }) => {
        $(#[$m])*
        #[derive(rust_hdl::prelude::LogicBlock)]
        pub struct $name {
            $(pub $port: rust_hdl::prelude::Signal<rust_hdl::prelude::In, rust_hdl::prelude::Bits<{ $w }>>,)*
            pub word: rust_hdl::prelude::Signal<rust_hdl::prelude::Out, rust_hdl::prelude::Bits<{ $bits }>>,
        }

        impl Default for $name {
            fn default() -> Self {
                $(
                    let (_, w) = $offset($field)
                        .unwrap_or_else(|| panic!("{}: no field {}", stringify!($name), $field));
                    assert!(w == $w, "{}: field {} is {} bits, its port {}", stringify!($name), $field, w, $w);
                )*
                $name {
                    $($port: Default::default(),)*
                    word: Default::default(),
                }
            }
        }

        impl rust_hdl::prelude::Logic for $name {
            fn update(&mut self) {
                let mut v: rust_hdl::prelude::Bits<{ $bits }> = rust_hdl::prelude::Bits::default();
                $(
                    let (o, _) = $offset($field).expect("checked when built");
                    v.set_bits::<{ $w }>(o, self.$port.val());
                )*
                self.word.next = v;
            }

            fn connect(&mut self) {
                self.word.connect();
            }

            fn hdl(&self) -> rust_hdl::prelude::Verilog {
                let mut s = format!("always @(*) begin\n    word = {}'d0;\n", $bits);
                $(
                    let (o, w) = $offset($field).expect("checked when built");
                    s.push_str(&format!(
                        "    word[{}:{}] = {};\n",
                        o + w - 1, o, stringify!($port)
                    ));
                )*
                s.push_str("end\n");
                rust_hdl::prelude::Verilog::Custom(s)
            }
        }
    };
}
