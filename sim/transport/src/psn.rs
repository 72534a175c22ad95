//! 24-bit packet sequence numbers (serial arithmetic, as rxe's `psn_compare`).

/// PSNs are 24 bits.
pub const PSN_MASK: u32 = 0xFF_FFFF;

/// `a - b` as a signed distance: positive when `a` is ahead of `b`. A difference of exactly
/// 2^23 counts as behind (rxe: `(s32)((a - b) << 8)`).
pub fn diff(a: u32, b: u32) -> i32 {
    ((a.wrapping_sub(b) << 8) as i32) >> 8
}

/// `a + n` modulo 2^24.
pub fn add(a: u32, n: u32) -> u32 {
    a.wrapping_add(n) & PSN_MASK
}

/// `a - n` modulo 2^24.
pub fn sub(a: u32, n: u32) -> u32 {
    a.wrapping_sub(n) & PSN_MASK
}

/// True when `a` is before `b`.
pub fn lt(a: u32, b: u32) -> bool {
    diff(a, b) < 0
}

/// True when `a` is `b` or before it.
pub fn le(a: u32, b: u32) -> bool {
    diff(a, b) <= 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_boundaries() {
        let e = 0x12_3456;
        assert_eq!(diff(add(e, (1 << 23) - 1), e), (1 << 23) - 1);
        assert!(diff(add(e, 1 << 23), e) < 0);
        assert_eq!(diff(0, PSN_MASK), 1);
        assert_eq!(diff(PSN_MASK, 0), -1);
        assert_eq!(add(PSN_MASK, 1), 0);
        assert_eq!(sub(0, 1), PSN_MASK);
    }
}
