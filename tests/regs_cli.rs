//! `rnic regs doc`: the three documents come out of the CLI as the map renders them, and a bad
//! format is refused.

mod common;

use common::rnic;

#[test]
fn regs_doc_prints_the_map() {
    let o = rnic(&["regs", "doc", "--format", "c"]);
    assert!(o.status.success());
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        rnic_regmap::render::c_header()
    );
    let o = rnic(&["regs", "doc", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(v, rnic_regmap::render::json());
    let o = rnic(&["regs", "doc"]);
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("# rnic register map"));
    let o = rnic(&["regs", "doc", "--format", "yaml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("yaml"));
}
