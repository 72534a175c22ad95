//! The receive parser's counter ports are the counters block of the register map, in order
//! (the map is the one definition; this keeps the hardware from drifting from it).

#[test]
fn the_parser_counters_are_the_maps() {
    let ports: Vec<String> = rnic_hw::rx_parser::COUNTERS
        .iter()
        .map(|c| format!("RX_{}", c.trim_start_matches("cnt_").to_uppercase()))
        .collect();
    assert_eq!(ports, rnic_regmap::regs::RX_COUNTERS);
}
