//! The header channel word in, the transport header out ([`crate::transport_header`]): wiring
//! and ORs, plus the opcode's class from an eight-bit decode. Combinational; the receive path
//! writes its output straight into the header FIFO, so synthesis keeps only the parser's
//! header register bits that reach it.

use rust_hdl::prelude::*;

use crate::header_channel::{HDR_BITS, HeaderRecord, offset_of};
use crate::header_extract::{bits_from_words, words_of};
use crate::transport_header::{Class, ENTRIES, Src, TH_BITS, TransportHeader, class_of, sources};

#[derive(LogicBlock, Default)]
pub struct HeaderCompact {
    /// A header channel word.
    pub rec: Signal<In, Bits<HDR_BITS>>,
    /// Its transport header.
    pub th: Signal<Out, Bits<TH_BITS>>,
    /// The last input seen by `update`, so that an unchanged input costs nothing.
    _last: Option<Vec<u64>>,
}

/// The Verilog expression of entry `k`, `width` bits wide.
fn entry_expr(k: usize) -> String {
    let en = &ENTRIES[k];
    let w = en.width;
    let mut terms = Vec::new();
    for (off, sw, sh) in sources(en) {
        let mut parts = Vec::new();
        let hi = w - sw - sh;
        if hi > 0 {
            parts.push(format!("{hi}'d0"));
        }
        parts.push(format!("rec[{}:{off}]", off + sw - 1));
        if sh > 0 {
            parts.push(format!("{sh}'d0"));
        }
        terms.push(format!("{{{}}}", parts.join(", ")));
    }
    for f in en.from {
        match f {
            Src::V4Prefix => {
                let (v6, _) = offset_of("v6").expect("v6");
                terms.push(format!("(rec[{v6}] ? {w}'d0 : {w}'h{:x})", 0xFFFFu64 << 32));
            }
            Src::Class if w == 2 => terms.push("cls".to_string()),
            Src::Class => terms.push(format!("{{{}'d0, cls}}", w - 2)),
            Src::Hdr(..) => {}
        }
    }
    assert!(!terms.is_empty(), "{}: no source", en.name);
    terms.join(" | ")
}

impl Logic for HeaderCompact {
    fn update(&mut self) {
        let words = words_of(self.rec.val());
        if self._last.as_ref() == Some(&words) {
            return;
        }
        let t = TransportHeader::from_record(&HeaderRecord::unpack(&words));
        self.th.next = bits_from_words::<TH_BITS>(&t.pack());
        self._last = Some(words);
    }

    fn connect(&mut self) {
        self.th.connect();
    }

    /// `th` as one concatenation of the entries (the last entry first), each the OR of its
    /// sources zero-extended and shifted into place; the class as a case over the opcode.
    fn hdl(&self) -> Verilog {
        let (op, _) = offset_of("OpCode").expect("OpCode");
        let mut by_class: [Vec<String>; 4] = Default::default();
        for code in 0..=255u8 {
            by_class[class_of(code) as usize].push(format!("8'h{code:02x}"));
        }
        let mut case = String::new();
        for c in [Class::Request, Class::Response, Class::Cnp] {
            case.push_str(&format!(
                "        {}: cls = 2'd{};\n",
                by_class[c as usize].join(", "),
                c as usize
            ));
        }
        let fields: Vec<String> = (0..ENTRIES.len())
            .rev()
            .map(|k| format!("    ({})", entry_expr(k)))
            .collect();
        Verilog::Custom(format!(
            "reg [1:0] cls;\nalways @(*) begin\n    case (rec[{}:{op}])\n{case}        default: cls = 2'd{};\n    endcase\nend\nalways @(*) th = {{\n{}\n}};\n",
            op + 7,
            Class::Other as usize,
            fields.join(",\n")
        ))
    }
}
