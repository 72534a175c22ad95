//! `rnic build --table DIR...`: the resource and timing table of finished builds, in Markdown,
//! from each build directory's `report.json` (out-of-context builds of `rnic build --core-only`
//! and board builds of `rnic build --board`). The README's table is this command's output.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use serde_json::Value;

/// One row: a design on a part, its resources and one clock's timing.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub design: String,
    pub part: String,
    pub lut4: u64,
    pub ff: u64,
    pub dp16kd: u64,
    pub mult: u64,
    pub clock: String,
    /// Fmax over the seeds (one entry for a board build).
    pub fmax_mhz: Vec<f64>,
    pub median_mhz: f64,
    pub target_mhz: f64,
    pub met: bool,
    /// Start and end module of the median seed's critical path (out-of-context builds).
    pub path: String,
}

fn num(v: &Value, key: &str, file: &Path) -> Result<f64> {
    v.get(key)
        .and_then(Value::as_f64)
        .ok_or_else(|| anyhow!("{}: no number `{key}`", file.display()))
}

fn used(v: &Value, key: &str, file: &Path) -> Result<u64> {
    v.get(key)
        .and_then(|u| u.get("used"))
        .and_then(Value::as_u64)
        .ok_or_else(|| anyhow!("{}: no `{key}.used`", file.display()))
}

fn text(v: &Value, key: &str, file: &Path) -> Result<String> {
    v.get(key)
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| anyhow!("{}: no string `{key}`", file.display()))
}

/// The rows of one `report.json` (one per clock).
pub fn rows_of(json: &str, file: &Path) -> Result<Vec<Row>> {
    let v: Value =
        serde_json::from_str(json).with_context(|| format!("{}: not JSON", file.display()))?;
    let clocks = v
        .get("clocks")
        .and_then(Value::as_array)
        .ok_or_else(|| anyhow!("{}: no `clocks`", file.display()))?;
    let part = text(&v, "part", file)?;
    let (lut4, ff) = (used(&v, "lut4", file)?, used(&v, "ff", file)?);
    let (dp16kd, mult) = (
        used(&v, "bram_dp16kd", file)?,
        used(&v, "dsp_mult18x18d", file)?,
    );
    let mut rows = Vec::new();
    if v.get("top").is_some() {
        // Out of context: the top's own figures (the wrapper's tree and registers taken off).
        let wl = num(&v, "wrapper_lut4", file)? as u64;
        let wf = num(&v, "wrapper_ff", file)? as u64;
        for c in clocks {
            let fmax = c
                .get("fmax_mhz")
                .and_then(Value::as_array)
                .ok_or_else(|| anyhow!("{}: a clock without `fmax_mhz`", file.display()))?
                .iter()
                .map(|x| {
                    x.as_f64()
                        .ok_or_else(|| anyhow!("{}: bad fmax", file.display()))
                })
                .collect::<Result<Vec<f64>>>()?;
            rows.push(Row {
                design: text(&v, "top", file)?,
                part: part.clone(),
                lut4: lut4.saturating_sub(wl),
                ff: ff.saturating_sub(wf),
                dp16kd,
                mult,
                clock: text(c, "clock", file)?,
                fmax_mhz: fmax,
                median_mhz: num(c, "median_mhz", file)?,
                target_mhz: num(c, "target_mhz", file)?,
                met: c.get("met").and_then(Value::as_bool).unwrap_or(false),
                path: format!(
                    "{} -> {}",
                    text(c, "start_module", file)?,
                    text(c, "end_module", file)?
                ),
            });
        }
    } else if v.get("target").is_some() {
        for c in clocks {
            let f = num(c, "achieved_mhz", file)?;
            rows.push(Row {
                design: format!("board {}", text(&v, "target", file)?),
                part: part.clone(),
                lut4,
                ff,
                dp16kd,
                mult,
                clock: text(c, "clock", file)?,
                fmax_mhz: vec![f],
                median_mhz: f,
                target_mhz: num(c, "constraint_mhz", file)?,
                met: c.get("met").and_then(Value::as_bool).unwrap_or(false),
                path: String::new(),
            });
        }
    } else {
        bail!(
            "{}: neither an out-of-context nor a board report",
            file.display()
        );
    }
    Ok(rows)
}

/// The Markdown table of `rows`.
pub fn markdown(rows: &[Row]) -> String {
    let mut s = String::from(
        "| design | part | LUT4 | FF | DP16KD | MULT18X18D | clock | Fmax MHz (min / median / max) \
         | target MHz | met | critical path |\n\
         |---|---|--:|--:|--:|--:|---|--:|--:|---|---|\n",
    );
    for r in rows {
        let lo = r.fmax_mhz.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = r.fmax_mhz.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let fmax = if r.fmax_mhz.len() > 1 {
            format!("{lo:.1} / {:.1} / {hi:.1}", r.median_mhz)
        } else {
            format!("{:.1}", r.median_mhz)
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.design,
            r.part,
            r.lut4,
            r.ff,
            r.dp16kd,
            r.mult,
            r.clock,
            fmax,
            r.target_mhz,
            if r.met { "yes" } else { "no" },
            r.path
        );
    }
    s
}

/// Prints the table of the builds in `dirs` (each holding a `report.json`).
pub fn run_table(dirs: &[PathBuf]) -> Result<()> {
    if dirs.is_empty() {
        bail!("--table needs build directories (each with a report.json), e.g. build/ooc-*");
    }
    let mut rows = Vec::new();
    for d in dirs {
        let file = d.join("report.json");
        let json = std::fs::read_to_string(&file).with_context(|| {
            format!("{}: no report (run rnic build there first)", file.display())
        })?;
        rows.extend(rows_of(&json, &file)?);
    }
    print!("{}", markdown(&rows));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const OOC: &str = r#"{"top": "rx_parser", "part": "LFE5U-25F-6", "tools": [],
        "synthesis_seconds": 1.0, "lut4": {"used": 1586, "total": 24288},
        "ff": {"used": 1665, "total": 24288}, "bram_dp16kd": {"used": 18, "total": 56},
        "dsp_mult18x18d": {"used": 0, "total": 28}, "wrapper_lut4": 586, "wrapper_ff": 665,
        "seeds": [], "clocks": [{"clock": "clock", "fmax_mhz": [80.0, 90.3, 85.0],
        "min_mhz": 80.0, "median_mhz": 85.0, "max_mhz": 90.3, "target_mhz": 125.0,
        "met": false, "start_module": "ex", "end_module": "top"}]}"#;
    const BOARD: &str = r#"{"target": "colorlight-i5", "part": "LFE5U-25F-6BG381C",
        "tools": [], "steps": [], "lut4": {"used": 100, "total": 24288},
        "ff": {"used": 50, "total": 24288}, "bram_dp16kd": {"used": 2, "total": 56},
        "dsp_mult18x18d": {"used": 0, "total": 28}, "clocks": [{"clock": "core",
        "achieved_mhz": 70.5, "constraint_mhz": 62.5, "met": true}], "timing_met": true,
        "bitstream": null}"#;

    #[test]
    fn rows_take_the_wrapper_off_and_print_min_median_max() {
        let r = rows_of(OOC, Path::new("a/report.json")).unwrap();
        assert_eq!(r.len(), 1);
        assert_eq!((r[0].lut4, r[0].ff, r[0].dp16kd), (1000, 1000, 18));
        let t = markdown(&r);
        assert!(
            t.contains(
                "| rx_parser | LFE5U-25F-6 | 1000 | 1000 | 18 | 0 | clock | \
                 80.0 / 85.0 / 90.3 | 125 | no | ex -> top |"
            ),
            "{t}"
        );
        let b = rows_of(BOARD, Path::new("b/report.json")).unwrap();
        let t = markdown(&b);
        assert!(
            t.contains("| board colorlight-i5 | LFE5U-25F-6BG381C | 100 | 50 | 2 | 0 | core | 70.5 | 62.5 | yes |  |"),
            "{t}"
        );
    }

    #[test]
    fn bad_reports_name_the_file() {
        let e = rows_of("{}", Path::new("x/report.json")).unwrap_err();
        assert!(e.to_string().contains("x/report.json"), "{e}");
        let e = rows_of("not json", Path::new("y/report.json")).unwrap_err();
        assert!(e.to_string().contains("y/report.json"), "{e}");
        let e = run_table(&[PathBuf::from("/nonexistent-build")]).unwrap_err();
        assert!(
            format!("{e:#}").contains("/nonexistent-build/report.json"),
            "{e:#}"
        );
        assert!(run_table(&[]).is_err());
    }
}
