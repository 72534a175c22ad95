//! Line charts as SVG, written directly (no plotting crate: nothing to compile, and the files
//! are small and diff-able). A figure is a column of panels sharing nothing but the width.

use std::fmt::Write as _;
use std::path::Path;

/// One line.
#[derive(Clone, Debug)]
pub struct Series {
    pub name: String,
    /// (x, y) points in drawing order.
    pub points: Vec<(f64, f64)>,
}

/// One chart.
#[derive(Clone, Debug)]
pub struct Panel {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub series: Vec<Series>,
}

const COLORS: [&str; 10] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf",
];
const WIDTH: f64 = 960.0;
const PANEL_H: f64 = 320.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 190.0;
const TOP: f64 = 30.0;
const BOTTOM: f64 = 45.0;
const MAX_POINTS: usize = 3000;

/// Tick positions covering [lo, hi] with a 1-2-5 step.
fn ticks(lo: f64, hi: f64) -> Vec<f64> {
    let span = (hi - lo).max(1e-12);
    let raw = span / 6.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let mut t = (lo / step).ceil() * step;
    let mut out = Vec::new();
    while t <= hi + step * 1e-9 {
        out.push(if t.abs() < step * 1e-9 { 0.0 } else { t });
        t += step;
    }
    out
}

fn fmt_tick(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v.abs() >= 1000.0 || v.fract() == 0.0 {
        format!("{v:.0}")
    } else if (v * 10.0).fract().abs() < 1e-9 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn panel_svg(out: &mut String, p: &Panel, y0: f64) {
    let pts = p.series.iter().flat_map(|s| s.points.iter());
    let (mut x_lo, mut x_hi, mut y_lo, mut y_hi) = (f64::MAX, f64::MIN, 0.0f64, f64::MIN);
    for &(x, y) in pts {
        if x.is_finite() && y.is_finite() {
            x_lo = x_lo.min(x);
            x_hi = x_hi.max(x);
            y_lo = y_lo.min(y);
            y_hi = y_hi.max(y);
        }
    }
    if x_lo > x_hi {
        (x_lo, x_hi, y_hi) = (0.0, 1.0, 1.0);
    }
    if x_hi <= x_lo {
        x_hi = x_lo + 1.0;
    }
    if y_hi <= y_lo {
        y_hi = y_lo + 1.0;
    }
    y_hi += (y_hi - y_lo) * 0.05;
    let (pw, ph) = (WIDTH - LEFT - RIGHT, PANEL_H - TOP - BOTTOM);
    let sx = |x: f64| LEFT + (x - x_lo) / (x_hi - x_lo) * pw;
    let sy = |y: f64| y0 + TOP + ph - (y - y_lo) / (y_hi - y_lo) * ph;
    let _ = writeln!(
        out,
        r#"<text x="{:.1}" y="{:.1}" font-size="15" font-weight="bold">{}</text>"#,
        LEFT,
        y0 + 20.0,
        esc(&p.title)
    );
    let _ = writeln!(
        out,
        r##"<rect x="{LEFT}" y="{:.1}" width="{pw}" height="{ph}" fill="none" stroke="#444"/>"##,
        y0 + TOP
    );
    for t in ticks(x_lo, x_hi) {
        let x = sx(t);
        let _ = writeln!(
            out,
            r##"<line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="#ddd"/><text x="{x:.1}" y="{:.1}" font-size="11" text-anchor="middle">{}</text>"##,
            y0 + TOP,
            y0 + TOP + ph,
            y0 + TOP + ph + 15.0,
            fmt_tick(t)
        );
    }
    for t in ticks(y_lo, y_hi) {
        let y = sy(t);
        let _ = writeln!(
            out,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" font-size="11" text-anchor="end">{}</text>"##,
            LEFT + pw,
            LEFT - 5.0,
            y + 4.0,
            fmt_tick(t)
        );
    }
    let _ = writeln!(
        out,
        r#"<text x="{:.1}" y="{:.1}" font-size="12" text-anchor="middle">{}</text>"#,
        LEFT + pw / 2.0,
        y0 + PANEL_H - 8.0,
        esc(&p.x_label)
    );
    let _ = writeln!(
        out,
        r#"<text x="15" y="{:.1}" font-size="12" text-anchor="middle" transform="rotate(-90 15 {:.1})">{}</text>"#,
        y0 + TOP + ph / 2.0,
        y0 + TOP + ph / 2.0,
        esc(&p.y_label)
    );
    for (i, s) in p.series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let stride = s.points.len().div_ceil(MAX_POINTS).max(1);
        let mut d = String::new();
        for (j, &(x, y)) in s.points.iter().step_by(stride).enumerate() {
            if !(x.is_finite() && y.is_finite()) {
                continue;
            }
            let _ = write!(
                d,
                "{}{:.1},{:.1}",
                if j == 0 { "M" } else { " L" },
                sx(x),
                sy(y)
            );
        }
        let dash = if i >= COLORS.len() {
            r#" stroke-dasharray="5,3""#
        } else {
            ""
        };
        let _ = writeln!(
            out,
            r#"<path d="{d}" fill="none" stroke="{color}" stroke-width="1.3"{dash}/>"#
        );
        let ly = y0 + TOP + 12.0 + i as f64 * 16.0;
        let lx = LEFT + pw + 12.0;
        let _ = writeln!(
            out,
            r#"<line x1="{lx:.1}" y1="{ly:.1}" x2="{:.1}" y2="{ly:.1}" stroke="{color}" stroke-width="2"{dash}/><text x="{:.1}" y="{:.1}" font-size="11">{}</text>"#,
            lx + 20.0,
            lx + 25.0,
            ly + 4.0,
            esc(&s.name)
        );
    }
}

/// The SVG text of a figure: `title` over `panels` stacked vertically.
pub fn render(title: &str, panels: &[Panel]) -> String {
    let h = 40.0 + PANEL_H * panels.len() as f64;
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{h}" viewBox="0 0 {WIDTH} {h}" font-family="sans-serif">"#
    );
    let _ = writeln!(out, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        out,
        r#"<text x="{:.1}" y="25" font-size="17" text-anchor="middle">{}</text>"#,
        WIDTH / 2.0,
        esc(title)
    );
    for (i, p) in panels.iter().enumerate() {
        panel_svg(&mut out, p, 40.0 + i as f64 * PANEL_H);
    }
    out.push_str("</svg>\n");
    out
}

/// Writes the figure to `path`.
pub fn write(path: &Path, title: &str, panels: &[Panel]) -> anyhow::Result<()> {
    std::fs::write(path, render(title, panels))
        .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_1_2_5_steps_covering_the_range() {
        assert_eq!(ticks(0.0, 40.0), vec![0.0, 10.0, 20.0, 30.0, 40.0]);
        assert_eq!(
            ticks(0.0, 1.0),
            vec![0.0, 0.2, 0.4, 0.6000000000000001, 0.8, 1.0]
        );
    }

    #[test]
    fn render_has_one_path_per_series() {
        let p = Panel {
            title: "t".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            series: vec![
                Series {
                    name: "a<b".into(),
                    points: vec![(0.0, 1.0), (1.0, 2.0)],
                },
                Series {
                    name: "c".into(),
                    points: vec![(0.0, 0.0)],
                },
            ],
        };
        let s = render("fig", &[p]);
        assert_eq!(s.matches("<path").count(), 2);
        assert!(s.contains("a&lt;b"));
    }
}
