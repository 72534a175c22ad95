//! Figures of merit: Jain's fairness index, convergence time, simple summaries.

/// Jain's fairness index (sum x)^2 / (n sum x^2): 1 when all equal, 1/n when one has all.
/// 1 for an empty or all-zero input.
pub fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let s2: f64 = x.iter().map(|v| v * v).sum();
    if x.is_empty() || s2 == 0.0 {
        1.0
    } else {
        s * s / (x.len() as f64 * s2)
    }
}

/// Convergence: given per-bin throughputs (`bins[i][f]` = flow `f` in bin `i`), the index of
/// the first bin that starts `hold` consecutive bins (fewer if the run ends first) in each of
/// which every flow is within `tol` (a fraction) of `fair`, or `None`.
pub fn first_fair_bin(bins: &[Vec<f64>], fair: f64, tol: f64, hold: usize) -> Option<usize> {
    let ok = |b: &Vec<f64>| !b.is_empty() && b.iter().all(|x| (x - fair).abs() <= tol * fair);
    (0..bins.len()).find(|&i| bins[i..].iter().take(hold.max(1)).all(ok))
}

/// Mean, standard deviation, minimum and maximum.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Summary {
    pub mean: f64,
    pub std: f64,
    pub min: f64,
    pub max: f64,
}

/// Summary of `x` (all zero for an empty input).
pub fn summarize(x: &[f64]) -> Summary {
    if x.is_empty() {
        return Summary::default();
    }
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let var = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    Summary {
        mean,
        std: var.sqrt(),
        min: x.iter().copied().fold(f64::INFINITY, f64::min),
        max: x.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_hand_worked() {
        assert_eq!(jain(&[1.0, 1.0]), 1.0);
        assert_eq!(jain(&[1.0, 0.0]), 0.5);
        // (1 + 3)^2 / (2 * (1 + 9)) = 16 / 20.
        assert!((jain(&[1.0, 3.0]) - 0.8).abs() < 1e-12);
    }

    #[test]
    fn convergence_is_the_first_bin_with_every_flow_near_fair() {
        let bins = vec![
            vec![38.0, 2.0],
            vec![25.0, 15.0],
            vec![21.0, 19.0],
            vec![23.0, 17.0],
        ];
        // Within 10% of 20: 18..22 for both flows first in bin 2.
        assert_eq!(first_fair_bin(&bins, 20.0, 0.1, 1), Some(2));
        assert_eq!(first_fair_bin(&bins[..2], 20.0, 0.1, 1), None);
        // Held for 3 bins: bin 2 qualifies only if bins 2..5 are fair; bin 3 (23, 17) is not.
        let mut longer = bins.clone();
        longer.extend([vec![20.0, 20.0], vec![20.0, 20.0], vec![20.0, 20.0]]);
        assert_eq!(first_fair_bin(&longer, 20.0, 0.1, 3), Some(4));
    }
}
